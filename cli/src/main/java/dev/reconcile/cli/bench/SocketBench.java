package dev.reconcile.cli.bench;

import dev.reconcile.agent.AgentConfig;
import dev.reconcile.agent.HostPort;
import dev.reconcile.agent.LocalReplica;
import dev.reconcile.agent.ReplicaAgent;
import dev.reconcile.agent.RoundReport;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Protocol bytes on the socket: two real agents ({@link ReplicaAgent}, in this JVM, plaintext on
 * loopback) with the initiator connecting through a byte-counting TCP proxy ({@link Proxy}) to the
 * responder's peer port. For each mode ({@code rateless}, {@code estimator}: the agent's {@code
 * mode} key) and each d, both agents are loaded with {@code n} records differing in d ({@code
 * ceil(d/2)} only on the initiator, {@code floor(d/2)} only on the responder) and dry-run rounds
 * are run (the session in full, no records streamed, so the data stays divergent). Per round: every
 * byte the proxy forwarded both ways, the bytes the session itself counted (serialized envelopes,
 * {@code SessionStats.bytesTotal()}, what the in-memory bench reports: each frame's serialized
 * envelope plus its 4-byte length prefix) and the frames both ways. The two counts must be equal:
 * plaintext frames are all that crosses the socket. Every round's lists are compared with the truth
 * element by element ({@link AgentBench#listedAgainstTruth}: the records the listed elements name
 * on each side are exactly the keys loaded on that side only), the {@code correct} column; a wrong
 * round is written and then ends the bench.
 */
public final class SocketBench {
  private SocketBench() {}

  /** One (mode, d) point over its rounds. */
  public record Summary(
      String mode,
      long n,
      long d,
      int rounds,
      double socketBytesMedian,
      double sessionBytesMedian,
      double framesMedian,
      double gapMedian,
      boolean socketEqualsSession,
      int correctRounds) {}

  public static List<Summary> run(
      long n, long[] ds, int rounds, Path work, Path out, Consumer<String> log) throws Exception {
    List<Summary> result = new ArrayList<>();
    try (Csv csv =
            new Csv(
                out.resolve("socket-rounds.csv"),
                "mode",
                "n",
                "d",
                "round",
                "socket_bytes",
                "session_bytes",
                "frames",
                "gap",
                "found",
                "correct");
        Csv sum =
            new Csv(
                out.resolve("socket-summary.csv"),
                "mode",
                "n",
                "d",
                "rounds",
                "socket_bytes_median",
                "session_bytes_median",
                "frames_median",
                "gap_median",
                "socket_equals_session",
                "correct_rounds")) {
      for (String mode : List.of("rateless", "estimator")) {
        for (long d : ds) {
          if (d > n) {
            log.accept(String.format("socket: skipping n=%d d=%d (d > n)", n, d));
            continue;
          }
          Path dir = work.resolve("socket-" + mode + "-" + d);
          try (ReplicaAgent a = start("a", dir, mode);
              ReplicaAgent b = start("b", dir, mode);
              Proxy proxy = new Proxy(b.peerPort())) {
            AgentBench.load(LocalReplica.of(a), LocalReplica.of(b), n, d, 16);
            HostPort peer = new HostPort("127.0.0.1", proxy.port());
            double[] socket = new double[rounds];
            double[] session = new double[rounds];
            double[] frames = new double[rounds];
            double[] gap = new double[rounds];
            boolean allEqual = true;
            int correct = 0;
            for (int r = 0; r < rounds; r++) {
              proxy.awaitClosed();
              proxy.reset();
              RoundReport rep = round(a, peer);
              proxy.awaitClosed();
              long found = rep.missingLocal + rep.missingRemote;
              String wrong = AgentBench.listedAgainstTruth(a, b, rep, d);
              socket[r] = proxy.bytes();
              session[r] = rep.stats.bytesTotal();
              frames[r] = rep.stats.framesSent() + rep.stats.framesReceived();
              gap[r] = socket[r] - session[r];
              allEqual &= gap[r] == 0;
              csv.row(
                  mode, n, d, r, socket[r], session[r], frames[r], gap[r], found, wrong == null);
              if (wrong != null) {
                throw new IllegalStateException("socket round (" + mode + ") " + wrong);
              }
              correct++;
            }
            Summary s =
                new Summary(
                    mode,
                    n,
                    d,
                    rounds,
                    Medians.of(socket),
                    Medians.of(session),
                    Medians.of(frames),
                    Medians.of(gap),
                    allEqual,
                    correct);
            sum.row(
                mode,
                n,
                d,
                rounds,
                s.socketBytesMedian(),
                s.sessionBytesMedian(),
                s.framesMedian(),
                s.gapMedian(),
                allEqual,
                correct);
            log.accept(
                String.format(
                    "socket %s n=%,d d=%,d: %.0f B on the socket, %.0f B counted by the session,"
                        + " %.0f frames, gap %.0f B (%s), %d of %d rounds listed the truth",
                    mode,
                    n,
                    d,
                    s.socketBytesMedian(),
                    s.sessionBytesMedian(),
                    s.framesMedian(),
                    s.gapMedian(),
                    allEqual ? "equal" : "NOT EQUAL",
                    correct,
                    rounds));
            result.add(s);
          } finally {
            AgentBench.wipe(dir);
          }
        }
      }
    }
    return result;
  }

  static RoundReport round(ReplicaAgent a, HostPort peer) throws Exception {
    RoundReport r = null;
    for (int attempt = 0; attempt < 20; attempt++) {
      if (attempt > 0) {
        Thread.sleep(50);
      }
      r = a.repair(peer, true).toCompletionStage().toCompletableFuture().get(10, TimeUnit.MINUTES);
      if (r.ok) {
        return r;
      }
    }
    throw new IllegalStateException("socket round failed 20 times, last: " + r.error);
  }

  static ReplicaAgent start(String node, Path dir, String mode) throws Exception {
    Map<String, String> m = new HashMap<>();
    m.put("node-id", node);
    m.put("cluster-id", "bench");
    m.put("data", dir.resolve(node).toString());
    m.put("peer-listen", "127.0.0.1:0");
    m.put("http-listen", "127.0.0.1:0");
    m.put("repair-interval", "0");
    m.put("purge-interval", "0");
    m.put("session-timeout", "10m");
    m.put("idle-timeout", "5m");
    // One connection per round: a round's bytes are all through the proxy once it closes.
    m.put("peer-keepalive", "0");
    m.put("mode", mode);
    return ReplicaAgent.start(AgentConfig.fromMap(m));
  }

  /**
   * A TCP proxy on loopback that forwards every connection to {@code 127.0.0.1:target} and counts
   * the bytes it forwards both ways (blocking sockets, two threads per connection).
   */
  static final class Proxy implements AutoCloseable {
    private final ServerSocket server;
    private final int target;
    private final AtomicLong bytes = new AtomicLong();
    private final AtomicInteger open = new AtomicInteger();
    private final Thread acceptor;
    private volatile boolean closed;

    Proxy(int target) throws IOException {
      this.target = target;
      this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      this.acceptor = new Thread(this::acceptLoop, "byte-counting-proxy");
      acceptor.setDaemon(true);
      acceptor.start();
    }

    int port() {
      return server.getLocalPort();
    }

    long bytes() {
      return bytes.get();
    }

    void reset() {
      bytes.set(0);
    }

    /** Waits (at most 10 s) until every proxied connection has closed both ways. */
    void awaitClosed() throws InterruptedException {
      long end = System.nanoTime() + 10_000_000_000L;
      while (open.get() > 0 && System.nanoTime() < end) {
        Thread.sleep(2);
      }
    }

    private void acceptLoop() {
      while (!closed) {
        try {
          Socket in = server.accept();
          Socket out = new Socket(InetAddress.getLoopbackAddress(), target);
          in.setTcpNoDelay(true);
          out.setTcpNoDelay(true);
          open.addAndGet(2);
          AtomicInteger directions = new AtomicInteger(2);
          pump(in, out, directions);
          pump(out, in, directions);
        } catch (IOException e) {
          if (!closed) {
            throw new UncheckedIOException("proxy accept: " + e.getMessage(), e);
          }
        }
      }
    }

    private void pump(Socket from, Socket to, AtomicInteger directions) {
      Thread t =
          new Thread(
              () -> {
                byte[] buf = new byte[1 << 16];
                try {
                  InputStream is = from.getInputStream();
                  OutputStream os = to.getOutputStream();
                  int k;
                  while ((k = is.read(buf)) >= 0) {
                    bytes.addAndGet(k);
                    os.write(buf, 0, k);
                    os.flush();
                  }
                  to.shutdownOutput();
                } catch (IOException e) {
                  // A reset ends the connection like a close; the bytes forwarded are counted.
                } finally {
                  if (directions.decrementAndGet() == 0) {
                    closeQuietly(from);
                    closeQuietly(to);
                  }
                  open.decrementAndGet();
                }
              },
              "proxy-pump");
      t.setDaemon(true);
      t.start();
    }

    private static void closeQuietly(Socket s) {
      try {
        s.close();
      } catch (IOException e) {
        // closing a finished connection: nothing left to forward
      }
    }

    @Override
    public void close() throws IOException {
      closed = true;
      server.close();
    }
  }
}
