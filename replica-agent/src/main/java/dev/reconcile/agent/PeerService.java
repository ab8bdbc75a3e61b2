package dev.reconcile.agent;

import dev.reconcile.agent.net.FrameChannel;
import dev.reconcile.core.PeerCheck;
import dev.reconcile.core.ReconcileSession;
import dev.reconcile.core.RepairConfig;
import dev.reconcile.core.SessionConfig;
import dev.reconcile.core.Wire;
import dev.reconcile.core.wire.Envelope;
import dev.reconcile.core.wire.Refusal;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.PemTrustOptions;
import java.security.SecureRandom;
import java.util.BitSet;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The peer port: accepts rounds as responder, starts rounds as initiator.
 *
 * <p>Connections carry one round after another: a connection whose round succeeded stays open for
 * {@code peer-keepalive} on the initiator's side ({@link PeerConnections}) and twice that on the
 * responder's, where it waits for the next Hello. Every round on it is a new session, checked and
 * counted (busy, per-peer limit, max-session-bytes) as on a new connection. With {@code
 * peer-keepalive} 0 every round opens its own connection and closes it.
 *
 * <p>The initiator's rounds, their connections and the kept ones run on one context of this
 * service, so that a kept connection's handlers, timers and its next round share one event loop.
 */
final class PeerService {
  private static final Logger LOG = LoggerFactory.getLogger(PeerService.class);
  private final AgentRuntime rt;
  private final AgentConfig config;
  private final PeerConnections connections;
  private final Context context;
  private final long keepMillis;
  private final SecureRandom random = new SecureRandom();
  private final AtomicInteger active = new AtomicInteger();
  private final Map<String, AtomicInteger> activeByPeer = new ConcurrentHashMap<>();
  private final Map<String, RoundReport> lastByPeer = new ConcurrentHashMap<>();
  private final Map<String, Future<RoundReport>> running = new ConcurrentHashMap<>();

  /**
   * The results of the rounds this agent started that have not ended, to their peers' labels
   * ({@link #abandonRounds}).
   */
  private final Map<Promise<RoundReport>, String> unfinished = new ConcurrentHashMap<>();

  private final Set<String> lastRoundOk = ConcurrentHashMap.newKeySet();
  // Initiator: the differences of the last two successful rounds with each peer, latest first.
  private final Map<String, long[]> lastDifferences = new ConcurrentHashMap<>();
  // Responder: kept connections waiting for their next round, oldest first, each with its context.
  private final Map<FrameChannel, Context> waiting =
      Collections.synchronizedMap(new LinkedHashMap<>());
  private NetServer server;

  PeerService(AgentRuntime rt) {
    this.rt = rt;
    this.config = rt.config();
    NetClientOptions co =
        new NetClientOptions()
            .setConnectTimeout(
                (int) Math.min(30_000, Math.max(1000, config.idleTimeout().toMillis())))
            .setTcpNoDelay(true);
    AgentConfig.Security s = config.security();
    if (s.peerTls()) {
      co.setSsl(true)
          .setKeyCertOptions(
              new PemKeyCertOptions().setCertPath(s.tlsCert()).setKeyPath(s.tlsKey()))
          .setTrustOptions(new PemTrustOptions().addCertPath(s.tlsCa()))
          // The configured peer address must be one of the server certificate's names (SAN).
          .setHostnameVerificationAlgorithm("HTTPS");
    }
    NetClient client = rt.vertx().createNetClient(co);
    this.keepMillis = config.peerKeepAlive().toMillis();
    this.context = rt.vertx().getOrCreateContext();
    this.connections =
        new PeerConnections(rt.vertx(), client, this::channel, keepMillis, rt.metrics());
  }

  Future<Integer> listen() {
    NetServerOptions so =
        new NetServerOptions()
            .setHost(config.peerListen().host())
            .setPort(config.peerListen().port())
            .setTcpNoDelay(true);
    AgentConfig.Security s = config.security();
    if (s.peerTls()) {
      so.setSsl(true)
          .setKeyCertOptions(
              new PemKeyCertOptions().setCertPath(s.tlsCert()).setKeyPath(s.tlsKey()))
          .setTrustOptions(new PemTrustOptions().addCertPath(s.tlsCa()))
          .setClientAuth(ClientAuth.REQUIRED);
    }
    server =
        rt.vertx()
            .createNetServer(so)
            .connectHandler(this::accept)
            .exceptionHandler(this::beforeAccept);
    return server.listen().map(NetServer::actualPort);
  }

  /**
   * Errors before a connection reaches {@link #accept}: with TLS these are failed handshakes (no
   * client certificate, a self-signed one, one from another CA, plaintext on a TLS port). Each is
   * logged and counted as {@code reconcile_peer_refusals_total{reason="tls"}}.
   */
  private void beforeAccept(Throwable t) {
    boolean tls = config.security().peerTls() && isTls(t);
    rt.metrics().refused(tls ? "tls" : "connection");
    LOG.warn(
        "refused a peer connection before the round ({}): {}",
        tls ? "TLS handshake failed" : "connection error",
        describe(t));
  }

  static boolean isTls(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof javax.net.ssl.SSLException
          || c.getClass().getName().contains("NotSslRecordException")
          || c.getClass().getName().contains("DecoderException")) {
        return true;
      }
    }
    return false;
  }

  private static String describe(Throwable t) {
    StringBuilder b = new StringBuilder(String.valueOf(t.getMessage()));
    for (Throwable c = t.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
      b.append(" <- ").append(c.getMessage());
    }
    return b.length() > 300 ? b.substring(0, 300) + "..." : b.toString();
  }

  private FrameChannel channel(NetSocket socket) {
    return new FrameChannel(socket, config.maxFrameBytes(), config.security().maxSessionBytes())
        .limitReceive(rt.vertx(), config.security().receiveRateLimit());
  }

  private void accept(NetSocket socket) {
    serve(socket, channel(socket), null);
  }

  /**
   * Runs a round as responder on {@code ch}: a new connection ({@code hello} null), or a kept one
   * whose next Hello was read.
   */
  private void serve(NetSocket socket, FrameChannel ch, Envelope hello) {
    String host = socket.remoteAddress() == null ? "?" : socket.remoteAddress().host();
    String label = String.valueOf(socket.remoteAddress());
    AtomicInteger perPeer = activeByPeer.computeIfAbsent(host, h -> new AtomicInteger());
    if (active.get() >= config.maxSessions()
        || perPeer.get() >= config.security().maxSessionsPerPeer()) {
      rt.metrics().refused("busy");
      LOG.warn(
          "refusing a round from {}: {} rounds active ({} from this peer)",
          label,
          active.get(),
          perPeer.get());
      ch.send(
              Envelope.newBuilder()
                  .setFormatVersion(Wire.FORMAT_VERSION)
                  .setRefusal(
                      Refusal.newBuilder()
                          .setCode(Refusal.Code.BUSY)
                          .setMessage(
                              "busy: "
                                  + active.get()
                                  + " rounds active (max "
                                  + config.maxSessions()
                                  + ", "
                                  + config.security().maxSessionsPerPeer()
                                  + " per peer)"))
                  .build())
          .onComplete(v -> ch.close("busy"));
      return;
    }
    active.incrementAndGet();
    perPeer.incrementAndGet();
    RoundRecords records = new RoundRecords(rt.store());
    ReconcileSession session =
        ReconcileSession.responder(
            sessionConfig(0, null).withPeerCheck(peerCheck(socket)),
            rt.store().sketches(),
            records);
    new PeerRound(rt, ch, session, label, keepMillis > 0, false)
        .run(hello)
        .onComplete(
            r -> {
              // Not active any more before the drop: the peer may start its next round at once.
              active.decrementAndGet();
              perPeer.decrementAndGet();
              lastByPeer.put("from " + label, r.result());
              if (r.result().ok && keepMillis > 0) {
                awaitNextRound(socket, ch);
              }
              afterRound(r.result(), records);
            });
  }

  /**
   * Responder: a connection whose round succeeded (reading paused) waits for the peer's next Hello
   * for twice {@code peer-keepalive} (the initiator closes it after one, so it is normally the
   * initiator that closes), then is closed. Any other frame is a protocol violation.
   */
  private void awaitNextRound(NetSocket socket, FrameChannel ch) {
    if (ch.isClosed()) {
      return;
    }
    waitForRound(ch);
    long timer =
        rt.vertx().setTimer(2 * keepMillis, id -> ch.close("idle between rounds (peer-keepalive)"));
    ch.frameHandler(
        e -> {
          rt.vertx().cancelTimer(timer);
          waiting.remove(ch);
          if (e.getBodyCase() == Envelope.BodyCase.HELLO) {
            ch.pause();
            ch.newSession(e.getSerializedSize() + 4);
            serve(socket, ch, e);
          } else {
            rt.metrics().refused("frame_between_rounds");
            ch.close("a frame other than Hello between rounds: " + e.getBodyCase());
          }
        });
    ch.closeHandler(
        r -> {
          rt.vertx().cancelTimer(timer);
          waiting.remove(ch);
        });
    ch.resume();
  }

  /**
   * Counts {@code ch} (on its own event loop) among the connections waiting for a round; past
   * {@code max-idle-connections} the one that has waited longest is closed (on its event loop), so
   * what peers keep open here is bounded whatever they do.
   */
  private void waitForRound(FrameChannel ch) {
    Map.Entry<FrameChannel, Context> oldest = null;
    synchronized (waiting) {
      waiting.put(ch, rt.vertx().getOrCreateContext());
      if (waiting.size() > config.maxIdleConnections()) {
        Iterator<Map.Entry<FrameChannel, Context>> it = waiting.entrySet().iterator();
        oldest = it.next();
        it.remove();
      }
    }
    if (oldest != null) {
      FrameChannel evicted = oldest.getKey();
      LOG.info(
          "closing the idle connection of {}: more than {} peer connections wait for a round"
              + " (max-idle-connections)",
          evicted.remoteAddress(),
          config.maxIdleConnections());
      oldest.getValue().runOnContext(v -> evicted.close("too many idle peer connections"));
    }
  }

  /** Runs a round with {@code peer} now (or joins the one running). */
  Future<RoundReport> repair(HostPort peer, boolean dryRun) {
    String label = peer.toString();
    Future<RoundReport> r = running.get(label);
    if (r != null) {
      return r;
    }
    Future<RoundReport> f = startRound(peer, label, dryRun);
    running.put(label, f);
    f.onComplete(
        x -> {
          running.remove(label, f);
          lastByPeer.put(label, x.result());
        });
    return f;
  }

  private Future<RoundReport> startRound(HostPort peer, String label, boolean dryRun) {
    if (active.get() >= config.maxSessions()) {
      return Future.succeededFuture(
          RoundReport.initiatorFailure(
              label,
              "busy: "
                  + active.get()
                  + " rounds active (max-sessions "
                  + config.maxSessions()
                  + ")"));
    }
    active.incrementAndGet();
    Promise<RoundReport> result = Promise.promise();
    unfinished.put(result, label);
    // tryComplete and tryFail: the agent's close may have ended the round first (abandonRounds).
    context.runOnContext(
        v ->
            attempt(peer, label, dryRun, true)
                .onComplete(
                    ar -> {
                      if (ar.succeeded()) {
                        result.tryComplete(ar.result());
                      } else {
                        result.tryFail(ar.cause());
                      }
                    }));
    return result
        .future()
        .onComplete(
            x -> {
              unfinished.remove(result);
              active.decrementAndGet();
            });
  }

  /**
   * Ends every round this agent started that has not ended, failed with {@code reason}: for the
   * agent's close, once its event loops have stopped. A round's steps hand their results to its
   * event loop; a step that was running when the loop stopped cannot, and the round's result, which
   * its caller waits for, would never come (the replay soak waited ten minutes for one). The
   * results are promises without a context, so they complete here, on the closing thread.
   */
  void abandonRounds(String reason) {
    for (Map.Entry<Promise<RoundReport>, String> e : List.copyOf(unfinished.entrySet())) {
      e.getKey().tryComplete(RoundReport.initiatorFailure(e.getValue(), reason));
    }
  }

  /**
   * One attempt at a round with {@code peer}, on this service's context: on the connection kept
   * from the last round when {@code mayReuse} and there is one, else on a new one. A kept
   * connection that turns out closed before the peer answered (it closed it as the round began)
   * costs nothing: the round runs again on a new connection.
   */
  private Future<RoundReport> attempt(
      HostPort peer, String label, boolean dryRun, boolean mayReuse) {
    // What an interrupted round left to resume: read only after a round with this peer that did
    // not succeed here (or the first one). After a success every partition is reconciled, as a
    // round without progress does, so there is nothing to wait for (a store read on a worker,
    // the only hop before the Hello on a kept connection). Otherwise the read and the connection
    // run at once.
    Future<BitSet> progress =
        lastRoundOk.contains(label)
            ? Future.succeededFuture(new BitSet())
            : rt.vertx().executeBlocking(() -> rt.store().partitionsDone(label, 0), false);
    Future<PeerConnections.Connection> connected =
        connections.open(peer.host(), peer.port(), label, mayReuse);
    return Future.all(progress, connected)
        .onFailure(
            err -> {
              if (connected.succeeded()) {
                connected.result().channel().close("round not started: " + err.getMessage());
              }
            })
        .compose(
            all -> {
              PeerConnections.Connection c = connected.result();
              BitSet done = progress.result();
              int[] parts = remaining(done);
              RoundRecords records = new RoundRecords(rt.store());
              ReconcileSession session =
                  ReconcileSession.initiator(
                      sessionConfig(random.nextLong(), parts)
                          .withDryRun(dryRun)
                          .withPeerCheck(peerCheck(c.socket()))
                          .withExpectedDifference(expectedDifference(label)),
                      rt.store().sketches(),
                      records,
                      rt.store().progressWith(label));
              int resumed = done.cardinality();
              PeerRound round =
                  new PeerRound(rt, c.channel(), session, label, keepMillis > 0, c.reused());
              return round
                  .run()
                  .compose(
                      rep -> {
                        if (rep.ok) {
                          lastRoundOk.add(label);
                          recordDifference(label, rep.missingLocal + rep.missingRemote);
                          connections.keep(label, c);
                        } else {
                          lastRoundOk.remove(label);
                        }
                        if (round.lostKeptConnection()) {
                          rt.metrics().peerConnectionsStale.increment();
                          LOG.info(
                              "round to {}: the kept connection was closed by the peer ({});"
                                  + " again on a new connection",
                              label,
                              rep.error);
                          return attempt(peer, label, dryRun, false);
                        }
                        return afterRound(rep, records)
                            .map(
                                r -> {
                                  r.resumedFrom = parts == null ? 0 : resumed;
                                  return r;
                                });
                      });
            })
        .recover(
            err -> {
              RoundReport rep =
                  RoundReport.initiatorFailure(
                      label, "cannot reach peer " + label + ": " + describe(err));
              rep.dryRun = dryRun;
              rt.metrics().roundsFailed.increment();
              if (config.security().peerTls() && isTls(err)) {
                rt.metrics().refused("tls");
              }
              LOG.warn("round to {}: {}", label, rep.error);
              return Future.succeededFuture(rep);
            });
  }

  /**
   * After a round that finished: purges the past-grace tombstones it offered the peer (see {@link
   * RoundRecords}), then yields the report; a failure to purge is logged and leaves them for the
   * next round or the purge. The initiator's round ends after it, the responder's before it (so
   * that the peer's next round is never refused as busy): a round the peer starts at once may still
   * see them and drop them again.
   */
  private Future<RoundReport> afterRound(RoundReport report, RoundRecords records) {
    if (!report.ok || !records.offeredAnyExpired()) {
      return Future.succeededFuture(report); // nothing to purge: no hop to a worker
    }
    return rt.vertx()
        .executeBlocking(records::dropOfferedExpired, false)
        .map(
            n -> {
              if (n > 0) {
                LOG.info(
                    "after the round with {}: dropped {} tombstones past the grace period that it"
                        + " found differing",
                    report.peer,
                    n);
              }
              return report;
            })
        .otherwise(
            t -> {
              LOG.warn("dropping tombstones past the grace period failed: {}", t.getMessage());
              return report;
            });
  }

  /**
   * The difference a round with {@code label} expects, which sizes the first batches of its
   * rateless streams (docs/rateless.md, "Pacing the stream"): the smaller of the last two
   * successful rounds' with that peer, so that one burst (a catch-up, a healed partition) does not
   * size the next round; 0, for none, before two rounds.
   */
  long expectedDifference(String label) {
    long[] d = lastDifferences.get(label);
    return d == null || d[1] < 0 ? 0 : Math.min(d[0], d[1]);
  }

  private void recordDifference(String label, long d) {
    lastDifferences.compute(label, (k, old) -> new long[] {d, old == null ? -1 : old[0]});
  }

  /**
   * Who the peer on {@code socket} may claim to be: its certificate's names, with TLS and pinning.
   */
  private PeerCheck peerCheck(NetSocket socket) {
    if (!config.security().peerTls() || !config.security().tlsPinNodeId()) {
      return PeerCheck.ANYONE;
    }
    return CertificateNames.pinTo(CertificateNames.of(socket));
  }

  /** A session of this agent: its identity, limits and repair settings. */
  private SessionConfig sessionConfig(long sessionId, int[] partitions) {
    RepairConfig repair = config.repairConfig(rt.store().clock()::wallMillis);
    return new SessionConfig(
            config.clusterId(), config.nodeId(), sessionId, partitions, rt.limits(), false, repair)
        .withPacing(config.pacing());
  }

  /** Partitions not yet done in an interrupted round, or null for all. */
  private int[] remaining(BitSet done) {
    int n = rt.store().sketches().params().partitions();
    if (done.isEmpty() || done.cardinality() >= n) {
      return null;
    }
    int[] out = new int[n - done.cardinality()];
    int j = 0;
    for (int p = 0; p < n; p++) {
      if (!done.get(p)) {
        out[j++] = p;
      }
    }
    return out;
  }

  Map<String, RoundReport> lastReports() {
    return lastByPeer;
  }

  int activeRounds() {
    return active.get();
  }

  Future<Void> close() {
    Promise<Void> kept = Promise.promise();
    context.runOnContext(v -> connections.close().onComplete(kept));
    Future<Void> c = kept.future();
    return server == null ? c : Future.all(c, server.close()).mapEmpty();
  }
}
