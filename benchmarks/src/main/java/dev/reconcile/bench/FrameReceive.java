package dev.reconcile.bench;

import com.google.protobuf.ByteString;
import dev.reconcile.agent.net.FrameChannel;
import dev.reconcile.cli.bench.Medians;
import dev.reconcile.core.Wire;
import dev.reconcile.core.wire.Envelope;
import dev.reconcile.core.wire.RowBatch;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;

/**
 * What receiving repair frames costs the receiving event loop: the agent's {@link FrameChannel} on
 * a Vert.x server with one event loop, fed over loopback by a plain blocking socket with frames of
 * {@code frameKiB} (a {@code RowBatch} of random bytes with their CRC32C, as a repair batch),
 * {@code mib} MiB a trial. The event loop only assembles and parses frames and hands each to a
 * checking thread, as a round hands frames to its worker; the checking thread verifies every
 * frame's sequence number and CRC32C (the correctness column: a wrong or missing frame fails the
 * run). Reported per trial: the receiving event loop's CPU time per GiB (its thread's CPU clock
 * from the connection to the last frame) and the rate. Not the product's path end to end: no
 * session, no store; it isolates the receive path that section 3's streams run through.
 *
 * <pre>
 *   java -cp benchmarks/target/benchmarks.jar dev.reconcile.bench.FrameReceive \
 *       [trials=9] [mib=1024] [frameKiB=1024]
 * </pre>
 */
public final class FrameReceive {
  private FrameReceive() {}

  private record Trial(double wallMs, double loopCpuMsPerGiB, long frames, boolean correct) {}

  public static void main(String[] args) throws Exception {
    int trials = args.length > 0 ? Integer.parseInt(args[0]) : 9;
    long mib = args.length > 1 ? Long.parseLong(args[1]) : 1024;
    int frameKiB = args.length > 2 ? Integer.parseInt(args[2]) : 1024;
    List<byte[]> frames = frames(frameKiB * 1024);
    long frameCount = mib * 1024 / frameKiB;
    Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1));
    try {
      List<Trial> results = new ArrayList<>();
      for (int t = 0; t < trials; t++) {
        Trial r = trial(vertx, frames, frameCount, frameKiB * 2 * 1024);
        results.add(r);
        System.out.printf(
            "trial %d: %d frames of %d KiB in %.0f ms (%.1f MB/s), receiving event loop %.1f"
                + " CPU-ms a GiB, %s%n",
            t,
            r.frames(),
            frameKiB,
            r.wallMs(),
            frameCount * frameKiB * 1024 / 1e3 / r.wallMs(),
            r.loopCpuMsPerGiB(),
            r.correct() ? "every frame correct" : "WRONG");
      }
      double[] cpu = results.stream().skip(1).mapToDouble(Trial::loopCpuMsPerGiB).toArray();
      double[] wall = results.stream().skip(1).mapToDouble(Trial::wallMs).toArray();
      System.out.printf(
          "median of trials 1-%d: receiving event loop %.1f CPU-ms a GiB, %.1f MB/s%n",
          trials - 1, Medians.of(cpu), frameCount * frameKiB * 1024 / 1e3 / Medians.of(wall));
      if (results.stream().anyMatch(r -> !r.correct())) {
        System.out.println("WRONG: a frame was missing, out of order or corrupt");
        System.exit(1);
      }
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  /** Eight distinct serialized frames of about {@code bytes} each, sent round-robin. */
  private static List<byte[]> frames(int bytes) {
    SplittableRandom r = new SplittableRandom(58);
    List<byte[]> out = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      byte[] rows = new byte[bytes - 64];
      r.nextBytes(rows);
      CRC32C crc = new CRC32C();
      crc.update(rows);
      out.add(
          Wire.frame(
              Envelope.newBuilder()
                  .setFormatVersion(Wire.FORMAT_VERSION)
                  .setRowBatch(
                      RowBatch.newBuilder()
                          .setPartition(i)
                          .setCount(1)
                          .setRows(ByteString.copyFrom(rows))
                          .setCrc32C((int) crc.getValue()))
                  .build()));
    }
    return out;
  }

  private static Trial trial(Vertx vertx, List<byte[]> frames, long frameCount, int maxFrame)
      throws Exception {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    BlockingQueue<Envelope> toCheck = new ArrayBlockingQueue<>(64);
    CompletableFuture<long[]> received = new CompletableFuture<>(); // {end nanos, loop CPU ns}
    long[] loopStart = new long[1]; // the event loop's CPU ns at the connection
    NetServer server =
        vertx
            .createNetServer(new NetServerOptions().setHost("127.0.0.1").setPort(0))
            .connectHandler(
                socket -> {
                  loopStart[0] = threads.getCurrentThreadCpuTime();
                  FrameChannel ch = new FrameChannel(socket, maxFrame);
                  long[] n = {0};
                  ch.frameHandler(
                      e -> {
                        try {
                          toCheck.put(e);
                        } catch (InterruptedException ex) {
                          Thread.currentThread().interrupt();
                          received.completeExceptionally(ex);
                        }
                        if (++n[0] == frameCount) {
                          received.complete(
                              new long[] {System.nanoTime(), threads.getCurrentThreadCpuTime()});
                        }
                      });
                });
    int port =
        server
            .listen()
            .toCompletionStage()
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS)
            .actualPort();
    CompletableFuture<Boolean> checked = new CompletableFuture<>();
    Thread checker =
        new Thread(
            () -> {
              boolean ok = true;
              CRC32C crc = new CRC32C();
              for (long i = 0; i < frameCount; i++) {
                try {
                  Envelope e = toCheck.take();
                  RowBatch b = e.getRowBatch();
                  crc.reset();
                  crc.update(b.getRows().asReadOnlyByteBuffer());
                  ok &=
                      b.getPartition() == i % frames.size()
                          && (int) crc.getValue() == b.getCrc32C();
                } catch (InterruptedException ex) {
                  Thread.currentThread().interrupt();
                  ok = false;
                  break;
                }
              }
              checked.complete(ok);
            },
            "frame-check");
    checker.setDaemon(true);
    checker.start();
    long start;
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
      OutputStream out = s.getOutputStream();
      start = System.nanoTime();
      for (long i = 0; i < frameCount; i++) {
        out.write(frames.get((int) (i % frames.size())));
      }
      out.flush();
      long[] end = received.get(120, TimeUnit.SECONDS);
      boolean ok = checked.get(120, TimeUnit.SECONDS);
      double gib = frameCount * (double) frames.get(0).length / (1L << 30);
      return new Trial((end[0] - start) / 1e6, (end[1] - loopStart[0]) / 1e6 / gib, frameCount, ok);
    } catch (IOException e) {
      throw new IOException("sending frames failed: " + e.getMessage(), e);
    } finally {
      server.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }
}
