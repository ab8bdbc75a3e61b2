package dev.reconcile.agent;

import dev.reconcile.agent.net.FrameChannel;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetSocket;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The initiator's connections to its peers. A connection whose round succeeded is kept open for
 * {@code peer-keepalive}, and the next round to the same peer runs on it: no connection set-up
 * (and, with TLS, no handshake) on the round's path. A round at d = 1 000 on loopback spent 1.3 to
 * 1.9 ms of its 8 to 12 ms connecting (docs/benchmarks.md, section 2).
 *
 * <p>While kept, the connection is read: the peer closing it removes it, and a frame from the peer
 * between rounds is a protocol violation (the connection is closed). The responder keeps its side
 * twice as long (see {@link PeerService}), so the initiator is normally the one that closes an idle
 * connection; a connection the peer closed just before it was reused fails its round before any
 * frame came back, and {@link PeerService} then runs the round again on a new connection.
 *
 * <p>Threading: every method runs on the peer service's context, as do the connections' handlers
 * and timers, so the map needs no lock.
 */
final class PeerConnections {
  /** A connection a round runs on; {@code reused} when it carried an earlier round. */
  record Connection(NetSocket socket, FrameChannel channel, boolean reused) {}

  private static final class Idle {
    final Connection connection;
    long timer;

    Idle(Connection connection) {
      this.connection = connection;
    }
  }

  private final Vertx vertx;
  private final NetClient client;
  private final Function<NetSocket, FrameChannel> channels;
  private final long keepMillis;
  private final AgentMetrics metrics;
  private final Map<String, Idle> idle = new HashMap<>();
  private boolean closed;

  PeerConnections(
      Vertx vertx,
      NetClient client,
      Function<NetSocket, FrameChannel> channels,
      long keepMillis,
      AgentMetrics metrics) {
    this.vertx = vertx;
    this.client = client;
    this.channels = channels;
    this.keepMillis = keepMillis;
    this.metrics = metrics;
  }

  /**
   * A connection to {@code peer}: the one kept for {@code label} when {@code mayReuse} and it is
   * still open, else a new one.
   */
  Future<Connection> open(String host, int port, String label, boolean mayReuse) {
    Idle kept = mayReuse ? idle.remove(label) : null;
    if (kept != null) {
      vertx.cancelTimer(kept.timer);
      FrameChannel ch = kept.connection.channel();
      if (!ch.isClosed()) {
        // Its handlers stay those of a kept connection (a frame from the peer closes it) until the
        // round takes it over.
        metrics.peerConnectionsReused.increment();
        ch.newSession(0);
        return Future.succeededFuture(kept.connection);
      }
    }
    return client
        .connect(port, host)
        .map(
            s -> {
              metrics.peerConnectionsOpened.increment();
              return new Connection(s, channels.apply(s), false);
            });
  }

  /**
   * Keeps {@code c}, whose round to {@code label} succeeded (reading paused), for the next round;
   * closes it when keeping is off or the service is closing.
   */
  void keep(String label, Connection c) {
    FrameChannel ch = c.channel();
    if (keepMillis <= 0 || closed || ch.isClosed()) {
      ch.close("round complete");
      return;
    }
    Idle previous = idle.remove(label);
    if (previous != null) {
      vertx.cancelTimer(previous.timer);
      previous.connection.channel().close("replaced by a newer connection");
    }
    Idle entry = new Idle(new Connection(c.socket(), ch, true));
    entry.timer =
        vertx.setTimer(
            keepMillis,
            id -> {
              if (idle.remove(label, entry)) {
                ch.close("idle between rounds (peer-keepalive)");
              }
            });
    ch.frameHandler(
        e -> {
          if (idle.remove(label, entry)) {
            vertx.cancelTimer(entry.timer);
          }
          metrics.refused("frame_between_rounds");
          ch.close("the peer sent a frame between rounds");
        });
    ch.closeHandler(
        r -> {
          if (idle.remove(label, entry)) {
            vertx.cancelTimer(entry.timer);
          }
        });
    idle.put(label, entry);
    ch.resume();
  }

  /** Closes the kept connections and the client. */
  Future<Void> close() {
    closed = true;
    List<Idle> all = new ArrayList<>(idle.values());
    idle.clear();
    for (Idle i : all) {
      vertx.cancelTimer(i.timer);
      i.connection.channel().close("agent stopping");
    }
    return client.close();
  }
}
