package dev.reconcile.agent.net;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.reconcile.core.Wire;
import dev.reconcile.core.wire.Envelope;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.internal.buffer.BufferInternal;
import io.vertx.core.net.NetSocket;
import io.vertx.core.parsetools.RecordParser;
import java.nio.ByteBuffer;
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
 */
public final class FrameChannel {
  private final NetSocket socket;
  private final RecordParser parser;
  private final int maxFrameBytes;
  private final long maxSessionBytes;
  private final Promise<String> closed = Promise.promise();
  private Handler<Envelope> frameHandler = e -> {};
  private boolean expectHeader = true;
  private long bytesIn;
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
   * @param maxSessionBytes most bytes (headers and bodies) accepted from the peer on this
   *     connection, also checked on each header before its body is read
   */
  public FrameChannel(NetSocket socket, int maxFrameBytes, long maxSessionBytes) {
    this.socket = socket;
    this.maxFrameBytes = maxFrameBytes;
    this.maxSessionBytes = maxSessionBytes;
    // The parser is fed here rather than reading the socket itself, so that the socket's chunks can
    // be counted against a receive limit and the socket paused directly.
    this.parser = RecordParser.newFixed(4);
    parser.handler(this::onRecord);
    socket.handler(this::onBytes);
    parser.exceptionHandler(t -> violate("read_error", "read error: " + t.getMessage()));
    socket.closeHandler(
        v -> {
          if (closeReason == null) {
            // Frames the peer sent before closing may sit in the parser while reading is paused
            // (a refusal, a failed-apply acknowledgement): deliver them before reporting the close.
            parser.resume();
          }
          markClosed(closeReason == null ? "peer closed the connection" : closeReason);
        });
    socket.exceptionHandler(t -> close("connection error: " + t.getMessage()));
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

  private void onBytes(Buffer b) {
    if (limiter != null) {
      long waitMs = limiter.take(b.length());
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
    parser.handle(b);
  }

  private void onRecord(Buffer b) {
    if (closeReason != null) {
      return;
    }
    if (expectHeader) {
      if (b.length() != 4) {
        violate("malformed_frame", "truncated frame header of " + b.length() + " bytes");
        return;
      }
      long n = b.getUnsignedInt(0);
      bytesIn += 4;
      if (n == 0 || n > maxFrameBytes) {
        violate(
            "frame_size",
            "frame of " + n + " bytes refused (cap " + maxFrameBytes + ", max-frame-bytes)");
        return;
      }
      if (bytesIn + n > maxSessionBytes) {
        violate(
            "session_bytes",
            "peer sent "
                + bytesIn
                + " bytes and announces a frame of "
                + n
                + " more: over the session cap of "
                + maxSessionBytes
                + " (max-session-bytes)");
        return;
      }
      expectHeader = false;
      parser.fixedSizeMode((int) n);
      return;
    }
    expectHeader = true;
    parser.fixedSizeMode(4);
    bytesIn += b.length();
    Envelope e;
    try {
      e = parse(b);
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
   * Parses a frame body in place: the parser's record buffer is a fresh array of its own (Vert.x
   * copies each record out of its accumulation buffer), so the message's bytes fields may alias it
   * instead of copying it once more, and it is not copied into another array first. A record batch
   * of large values is then copied once fewer times on the event loop and once fewer on the worker.
   */
  private static Envelope parse(Buffer b) throws InvalidProtocolBufferException {
    ByteBuffer body = ((BufferInternal) b).getByteBuf().nioBuffer();
    CodedInputStream in = CodedInputStream.newInstance(body);
    in.enableAliasing(true);
    return Envelope.parser().parseFrom(in);
  }

  /** Sends one frame; the future completes when it is written to the socket. */
  public Future<Void> send(Envelope e) {
    if (closeReason != null) {
      return Future.failedFuture("channel closed: " + closeReason);
    }
    byte[] f = Wire.frame(e);
    bytesOut += f.length;
    return socket.write(Buffer.buffer(f));
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
    parser.pause();
    socket.pause();
  }

  public void resume() {
    pausedByOwner = false;
    parser.resume(); // may deliver buffered frames, whose handler may pause again
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
    closed.tryComplete(closeReason);
  }

  /** Completes with the reason when the connection ends, whoever ended it. */
  public Future<String> closed() {
    return closed.future();
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
