package dev.reconcile.agent.net;

import static com.google.protobuf.ByteString.copyFrom;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteOutput;
import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import dev.reconcile.core.Wire;
import dev.reconcile.core.wire.Envelope;
import dev.reconcile.core.wire.Refusal;
import dev.reconcile.core.wire.RowBatch;
import io.netty.buffer.ByteBuf;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.internal.net.NetSocketInternal;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The frame assembler over a real loopback socket: frames written in pieces cut at random places
 * (headers and bodies split, several frames in one write) arrive whole and in order while the
 * handler pauses delivery after every frame, as a round does; a header announcing too much is
 * refused before anything is allocated for it. Every chunk the transport hands over is released,
 * whether its bytes were read or the channel closed with it pending.
 */
class FrameChannelTest {
  private Vertx vertx;
  private NetServer server;
  private final List<FrameChannel> channels = Collections.synchronizedList(new ArrayList<>());
  // The event loop context of each channel's connection, where the channel must be used.
  private final List<Context> contexts = Collections.synchronizedList(new ArrayList<>());
  // Every chunk the transport handed to a channel, and their bytes.
  private final List<ByteBuf> chunks = Collections.synchronizedList(new ArrayList<>());
  private final AtomicLong chunkBytes = new AtomicLong();
  // Whether the frame handler resumes delivery after each frame (else it stays paused).
  private volatile boolean resumeAfterFrame = true;

  @BeforeEach
  void start() throws Exception {
    vertx = Vertx.vertx();
  }

  @AfterEach
  void stop() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private int listen(int maxFrameBytes, List<Envelope> got, CompletableFuture<String> closed)
      throws Exception {
    server =
        vertx
            .createNetServer(new NetServerOptions().setHost("127.0.0.1").setPort(0))
            .connectHandler(
                socket -> {
                  FrameChannel ch = new FrameChannel(socket, maxFrameBytes);
                  channels.add(ch);
                  contexts.add(Vertx.currentContext());
                  // Sees each chunk on its way to the channel, to check that it is released.
                  ((NetSocketInternal) socket)
                      .messageHandler(
                          m -> {
                            ByteBuf b = (ByteBuf) m;
                            chunks.add(b);
                            chunkBytes.addAndGet(b.readableBytes());
                            ch.onMessage(m);
                          });
                  ch.frameHandler(
                      e -> {
                        got.add(e);
                        // As a round does: no more frames until this one is processed.
                        ch.pause();
                        if (resumeAfterFrame) {
                          vertx.setTimer(1, id -> ch.resume());
                        }
                      });
                  ch.closeHandler(closed::complete);
                });
    return server
        .listen()
        .toCompletionStage()
        .toCompletableFuture()
        .get(10, TimeUnit.SECONDS)
        .actualPort();
  }

  private static Envelope frame(SplittableRandom r, int i) {
    int size = r.nextInt(4) == 0 ? r.nextInt(200_000) : r.nextInt(40);
    StringBuilder b = new StringBuilder(size);
    for (int k = 0; k < size; k++) {
      b.append((char) ('a' + r.nextInt(26)));
    }
    return Envelope.newBuilder()
        .setFormatVersion(i)
        .setRefusal(Refusal.newBuilder().setMessage(b.toString()))
        .build();
  }

  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {1, 2, 3, 4, 5})
  void framesCutAtRandomPlacesArriveWholeAndInOrder(long seed) throws Exception {
    SplittableRandom r = new SplittableRandom(seed);
    List<Envelope> got = Collections.synchronizedList(new ArrayList<>());
    CompletableFuture<String> closed = new CompletableFuture<>();
    int port = listen(1 << 20, got, closed);
    List<Envelope> sent = new ArrayList<>();
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    for (int i = 0; i < 60; i++) {
      Envelope e = frame(r, i);
      sent.add(e);
      all.write(Wire.frame(e));
    }
    byte[] bytes = all.toByteArray();
    try (Socket s = new Socket("127.0.0.1", port)) {
      s.setTcpNoDelay(true);
      OutputStream out = s.getOutputStream();
      int at = 0;
      while (at < bytes.length) {
        int n = Math.min(bytes.length - at, 1 + r.nextInt(r.nextBoolean() ? 7 : 70_000));
        out.write(bytes, at, n);
        out.flush();
        at += n;
        if (r.nextInt(8) == 0) {
          Thread.sleep(1); // let some pieces arrive as chunks of their own
        }
      }
      long end = System.nanoTime() + 20_000_000_000L;
      while (got.size() < sent.size() && System.nanoTime() < end) {
        Thread.sleep(5);
      }
    }
    assertThat(got).as("seed %d", seed).containsExactlyElementsOf(sent);
    assertThat(channels.get(0).bytesIn()).isEqualTo(bytes.length);
    assertThat(channels.get(0).violation()).isNull();
    closed.get(10, TimeUnit.SECONDS);
    assertAllReleased();
  }

  @Test
  void chunksPendingWhenTheChannelClosesAreReleased() throws Exception {
    resumeAfterFrame = false;
    SplittableRandom r = new SplittableRandom(7);
    List<Envelope> got = Collections.synchronizedList(new ArrayList<>());
    CompletableFuture<String> closed = new CompletableFuture<>();
    int port = listen(1 << 20, got, closed);
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    for (int i = 0; i < 20; i++) {
      all.write(Wire.frame(frame(r, i)));
    }
    byte[] bytes = all.toByteArray();
    try (Socket s = new Socket("127.0.0.1", port)) {
      s.getOutputStream().write(bytes);
      s.getOutputStream().flush();
      long end = System.nanoTime() + 10_000_000_000L;
      while (got.isEmpty() && System.nanoTime() < end) {
        Thread.sleep(5);
      }
      Thread.sleep(100); // what was in flight when reading paused arrives
      // Delivery stopped after the first frame: the rest of what was read waits in the channel.
      assertThat(got).hasSize(1);
      assertThat(chunkBytes.get()).isGreaterThan(Wire.frame(got.get(0)).length);
      assertThat(chunks).anyMatch(b -> b.refCnt() > 0);
      FrameChannel ch = channels.get(0);
      contexts.get(0).runOnContext(v -> ch.close("closed by the test"));
      assertThat(closed.get(10, TimeUnit.SECONDS)).isEqualTo("closed by the test");
    }
    assertThat(got).hasSize(1);
    assertAllReleased();
  }

  @Test
  void aParsedFramesBytesFieldsAliasTheFrame() throws Exception {
    byte[] rows = new byte[100_000];
    new SplittableRandom(58).nextBytes(rows);
    byte[] framed =
        Wire.frame(
            Envelope.newBuilder()
                .setFormatVersion(Wire.FORMAT_VERSION)
                .setRowBatch(
                    RowBatch.newBuilder().setPartition(3).setCount(1).setRows(copyFrom(rows)))
                .build());
    byte[] body = Arrays.copyOfRange(framed, 4, framed.length);
    ByteString parsed = FrameChannel.parse(body).getRowBatch().getRows();
    assertThat(parsed.toByteArray()).isEqualTo(rows);
    // The field's one backing array is the frame's body itself, not a copy of the rows.
    List<byte[]> arrays = new ArrayList<>();
    UnsafeByteOperations.unsafeWriteTo(
        parsed,
        new ByteOutput() {
          @Override
          public void write(byte value) {
            throw new AssertionError("a single byte written: not one array");
          }

          @Override
          public void write(byte[] value, int offset, int length) {
            arrays.add(value);
          }

          @Override
          public void writeLazy(byte[] value, int offset, int length) {
            arrays.add(value);
          }

          @Override
          public void write(ByteBuffer value) {
            throw new AssertionError("a buffer written: not one array");
          }

          @Override
          public void writeLazy(ByteBuffer value) {
            throw new AssertionError("a buffer written: not one array");
          }
        });
    assertThat(arrays).hasSize(1);
    assertThat(arrays.get(0)).isSameAs(body);
  }

  /** Every chunk seen has been released (on the event loop, so wait for it a little). */
  private void assertAllReleased() throws InterruptedException {
    long end = System.nanoTime() + 5_000_000_000L;
    while (System.nanoTime() < end) {
      synchronized (chunks) {
        if (chunks.stream().allMatch(b -> b.refCnt() == 0)) {
          break;
        }
      }
      Thread.sleep(5);
    }
    synchronized (chunks) {
      assertThat(chunks).isNotEmpty().allMatch(b -> b.refCnt() == 0, "released");
    }
  }

  @ParameterizedTest(name = "announced {0} bytes")
  @ValueSource(longs = {0, 1025, 0xFFFF_FFFFL})
  void aHeaderAnnouncingTooMuchOrNothingIsRefused(long announced) throws Exception {
    List<Envelope> got = Collections.synchronizedList(new ArrayList<>());
    CompletableFuture<String> closed = new CompletableFuture<>();
    int port = listen(1024, got, closed);
    Envelope ok =
        Envelope.newBuilder()
            .setFormatVersion(2)
            .setRefusal(Refusal.newBuilder().setMessage("fine"))
            .build();
    try (Socket s = new Socket("127.0.0.1", port)) {
      OutputStream out = s.getOutputStream();
      out.write(Wire.frame(ok));
      // The bad header split in two writes, then bytes that must never be read as a body.
      out.write(new byte[] {(byte) (announced >>> 24), (byte) (announced >>> 16)});
      out.flush();
      Thread.sleep(5);
      out.write(new byte[] {(byte) (announced >>> 8), (byte) announced, 1, 2, 3});
      out.flush();
      String why = closed.get(10, TimeUnit.SECONDS);
      assertThat(why).contains("frame of " + announced + " bytes refused (cap 1024");
    }
    assertThat(got).containsExactly(ok);
    assertThat(channels.get(0).violation()).isEqualTo("frame_size");
    assertAllReleased();
  }
}
