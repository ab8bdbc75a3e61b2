package dev.reconcile.agent.net;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.UnsafeByteOperations;
import dev.reconcile.core.Wire;
import dev.reconcile.core.wire.Envelope;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.ReferenceCountUtil;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.internal.buffer.BufferInternal;
import io.vertx.core.internal.net.NetSocketInternal;
import io.vertx.core.net.NetSocket;
import java.util.ArrayDeque;
import org.slf4j.LoggerFactory;

/**
 * Length-prefixed protobuf frames over a Vert.x socket (see docs/wire-format.md): a 4-byte
 * big-endian length, checked against {@code maxFrameBytes} before the body is read, then one {@link
 * Envelope}.
 *
 * <p>Runs on the socket's event loop and only moves bytes: parsing a frame is bounded by the cap,
 * and everything that touches the store or peels a table happens on worker threads in the caller.
 * Reading can be paused ({@link #pause}) for backpressure toward the peer, and limited to a byte
 * rate ({@link #limitReceive}): the socket is paused whenever the bytes read so far are ahead of
 * the rate, and resumed by a timer (nothing waits on the event loop). Either pause stops the
 * socket; reading goes on when both are lifted.
 *
 * <p>Frames are assembled here, not by Vert.x's {@code RecordParser}: the 4-byte header is
 * validated first, then the body is copied once, chunk by chunk, into an array of exactly the
 * announced size, and the frame is parsed in place from that array. The parser appended every chunk
 * to a growing buffer (reallocated and copied as it grew) and copied each record out again; with 64
 * KiB values that was most of the receiving event loop's time (docs/benchmarks.md, section 3a). The
 * chunks are the transport's own buffers, taken through Vert.x's message handler: its data handler
 * would first copy each into a new heap buffer (docs/benchmarks.md, section 3, "stop 58"). Each is
 * released once its bytes are copied out, or when the channel closes. Chunks that arrive while
 * delivery is paused wait in {@code pending} (the socket is paused too, so that is what was already
 * in flight).
 */
public final class FrameChannel {
  private final NetSocket socket;
  // Chunks received and not yet copied out, each from its reader index; released here.
  private final ArrayDeque<ByteBuf> pending = new ArrayDeque<>();
  private final byte[] header = new byte[4];
  private int headerFill;
  private byte[] body; // the frame being assembled, or null while a header is read
  private int bodyFill;
  private boolean deliveryPaused;
  private final int maxFrameBytes;
  private final long maxSessionBytes;
  private Handler<Envelope> frameHandler = e -> {};
  private Handler<String> closeHandler;
  private long bytesIn;
  // bytesIn when the current round began: max-session-bytes counts from it.
  private long sessionStart;
  private long bytesOut;
  private String closeReason;
  private String violation;
  private ReceiveLimiter limiter;
  private Vertx vertx;
  private boolean pausedByOwner;
  private boolean pausedByLimit;
  private long limitPauses;

  public FrameChannel(NetSocket socket, int maxFrameBytes) {
    this(socket, maxFrameBytes, Long.MAX_VALUE);
  }

  /**
   * @param maxFrameBytes largest frame body accepted, checked on the 4-byte header before the body
   *     is read (nothing is allocated from a larger claim)
   * @param maxSessionBytes most bytes (headers and bodies) accepted from the peer in one round
   *     (from the connection's start or the last {@link #newSession}), also checked on each header
   *     before its body is read
   */
  public FrameChannel(NetSocket socket, int maxFrameBytes, long maxSessionBytes) {
    this.socket = socket;
    this.maxFrameBytes = maxFrameBytes;
    this.maxSessionBytes = maxSessionBytes;
    if (!(socket instanceof NetSocketInternal internal)) {
      throw new IllegalArgumentException(
          "not a socket of Vert.x's: " + socket.getClass().getName());
    }
    internal.messageHandler(this::onMessage);
    socket.closeHandler(
        v -> {
          if (closeReason == null) {
            // Frames the peer sent before closing may wait in pending while delivery is paused
            // (a refusal, a failed-apply acknowledgement): deliver them before reporting the close.
            deliveryPaused = false;
            assemble();
          }
          markClosed(closeReason == null ? "peer closed the connection" : closeReason);
        });
    socket.exceptionHandler(t -> close("connection error: " + t.getMessage()));
  }

  /**
   * A new round begins on this connection (a kept-open connection carries one round after another):
   * {@code max-session-bytes} counts the peer's bytes from here. The frame that begins it (a Hello,
   * already read) counts toward it.
   */
  public void newSession(int firstFrameBytes) {
    sessionStart = bytesIn - firstFrameBytes;
  }

  /** Where decoded frames go, on the event loop, in order. */
  public FrameChannel frameHandler(Handler<Envelope> h) {
    this.frameHandler = h;
    return this;
  }

  /**
   * Limits what is read from the peer to {@code bytesPerSecond} (0 = unlimited), timing the pauses
   * with {@code vertx}'s timers.
   */
  public FrameChannel limitReceive(Vertx vertx, long bytesPerSecond) {
    this.vertx = vertx;
    this.limiter = bytesPerSecond > 0 ? new ReceiveLimiter(bytesPerSecond, System::nanoTime) : null;
    return this;
  }

  /** A message from the transport: a chunk of bytes, which this channel now owns. */
  void onMessage(Object message) {
    if (!(message instanceof ByteBuf b) || closeReason != null) {
      ReferenceCountUtil.release(message);
      return;
    }
    if (limiter != null) {
      long waitMs = limiter.take(b.readableBytes());
      if (waitMs > 0 && !pausedByLimit && closeReason == null) {
        pausedByLimit = true;
        limitPauses++;
        socket.pause();
        vertx.setTimer(
            waitMs,
            id -> {
              pausedByLimit = false;
              if (!pausedByOwner && closeReason == null) {
                socket.resume();
              }
            });
      }
    }
    pending.addLast(b);
    assemble();
  }

  /**
   * Moves pending bytes into headers and bodies and delivers each complete frame, until the pending
   * chunks are used up, delivery is paused (by the frame handler too) or the channel closes.
   */
  private void assemble() {
    while (!deliveryPaused && closeReason == null && !pending.isEmpty()) {
      ByteBuf chunk = pending.peekFirst();
      int available = chunk.readableBytes();
      if (available == 0) {
        pending.pollFirst().release();
        continue;
      }
      if (body == null) {
        int take = Math.min(header.length - headerFill, available);
        chunk.readBytes(header, headerFill, take);
        headerFill += take;
        if (headerFill == header.length) {
          headerFill = 0;
          onHeader();
        }
      } else {
        int take = Math.min(body.length - bodyFill, available);
        chunk.readBytes(body, bodyFill, take);
        bodyFill += take;
        if (bodyFill == body.length) {
          byte[] frame = body;
          body = null;
          onBody(frame);
        }
      }
    }
  }

  /** A complete header: checks the announced length before anything is allocated for it. */
  private void onHeader() {
    long n =
        (header[0] & 0xFFL) << 24
            | (header[1] & 0xFFL) << 16
            | (header[2] & 0xFFL) << 8
            | (header[3] & 0xFFL);
    bytesIn += 4;
    if (n == 0 || n > maxFrameBytes) {
      violate(
          "frame_size",
          "frame of " + n + " bytes refused (cap " + maxFrameBytes + ", max-frame-bytes)");
      return;
    }
    if (bytesIn - sessionStart + n > maxSessionBytes) {
      violate(
          "session_bytes",
          "peer sent "
              + (bytesIn - sessionStart)
              + " bytes in this round and announces a frame of "
              + n
              + " more: over the session cap of "
              + maxSessionBytes
              + " (max-session-bytes)");
      return;
    }
    body = new byte[(int) n];
    bodyFill = 0;
  }

  private void onBody(byte[] frame) {
    bytesIn += frame.length;
    Envelope e;
    try {
      e = parse(frame);
    } catch (InvalidProtocolBufferException ex) {
      violate("malformed_frame", "malformed frame: " + ex.getMessage());
      return;
    }
    try {
      frameHandler.handle(e);
    } catch (RuntimeException | LinkageError ex) {
      // A bug in the handler must not leave the connection half-alive until a timeout.
      LoggerFactory.getLogger(FrameChannel.class)
          .error("frame handler failed on a {} frame", e.getBodyCase(), ex);
      close("internal error handling a " + e.getBodyCase() + " frame: " + ex);
    }
  }

  /**
   * Parses a frame body in place: the body is a fresh array owned by this frame alone and never
   * written again, so the message's bytes fields alias it instead of copying it once more (a repair
   * batch's rows are most of its frame). Protocol Buffers alias only an input declared immutable,
   * which {@code unsafeWrap} does; {@code CodedInputStream.newInstance(byte[])} with aliasing
   * enabled still copied every bytes field (docs/benchmarks.md, section 3, "stop 58").
   */
  static Envelope parse(byte[] frame) throws InvalidProtocolBufferException {
    CodedInputStream in = UnsafeByteOperations.unsafeWrap(frame).newCodedInput();
    in.enableAliasing(true);
    return Envelope.parser().parseFrom(in);
  }

  /** Sends one frame; the future completes when it is written to the socket. */
  public Future<Void> send(Envelope e) {
    if (closeReason != null) {
      return Future.failedFuture("channel closed: " + closeReason);
    }
    return sendFrame(Wire.frame(e));
  }

  /**
   * Sends one frame already serialized by {@link Wire#frame} (on a worker, so that the event loop
   * does not copy the bodies); the array is handed to the socket without a copy and must not change
   * afterwards.
   */
  public Future<Void> sendFrame(byte[] frame) {
    if (closeReason != null) {
      return Future.failedFuture("channel closed: " + closeReason);
    }
    bytesOut += frame.length;
    return socket.write(BufferInternal.buffer(Unpooled.wrappedBuffer(frame)));
  }

  public boolean writeQueueFull() {
    return socket.writeQueueFull();
  }

  /** Calls {@code h} once the write queue has drained (at once if it is not full). */
  public void whenWritable(Handler<Void> h) {
    if (!socket.writeQueueFull()) {
      h.handle(null);
    } else {
      socket.drainHandler(
          v -> {
            socket.drainHandler(null);
            h.handle(null);
          });
    }
  }

  public void pause() {
    pausedByOwner = true;
    deliveryPaused = true;
    socket.pause();
  }

  public void resume() {
    pausedByOwner = false;
    deliveryPaused = false;
    assemble(); // may deliver pending frames, whose handler may pause again
    if (!pausedByOwner && !pausedByLimit) {
      socket.resume();
    }
  }

  /** How many times the receive limit paused reading so far. */
  public long limitPauses() {
    return limitPauses;
  }

  /** Closes because the peer broke a framing rule; {@code tag} names it for metrics. */
  private void violate(String tag, String reason) {
    if (closeReason == null) {
      violation = tag;
    }
    close(reason);
  }

  /**
   * Why this channel closed the connection on the peer's account (a short metric tag such as {@code
   * frame_size}, {@code session_bytes}, {@code malformed_frame}), or null.
   */
  public String violation() {
    return violation;
  }

  /** Closes with a reason (logged by the owner); idempotent. */
  public void close(String reason) {
    if (closeReason == null) {
      closeReason = reason;
      socket.close();
      markClosed(reason);
    }
  }

  private void markClosed(String reason) {
    if (closeReason == null) {
      closeReason = reason;
    }
    for (ByteBuf b : pending) {
      b.release();
    }
    pending.clear();
    body = null;
    Handler<String> h = closeHandler;
    closeHandler = null;
    if (h != null) {
      h.handle(closeReason);
    }
  }

  /**
   * The current owner's handler of the connection's end, replacing the previous owner's (a kept
   * connection has one owner after another, and only the current one hears of the end). Called at
   * once, on this thread, if the connection has already ended.
   */
  public void closeHandler(Handler<String> h) {
    if (closeReason != null) {
      h.handle(closeReason);
    } else {
      closeHandler = h;
    }
  }

  public boolean isClosed() {
    return closeReason != null;
  }

  public String remoteAddress() {
    return String.valueOf(socket.remoteAddress());
  }

  public long bytesIn() {
    return bytesIn;
  }

  public long bytesOut() {
    return bytesOut;
  }
}
