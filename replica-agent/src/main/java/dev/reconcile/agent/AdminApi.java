package dev.reconcile.agent;

import dev.reconcile.agent.cluster.ClusterApi;
import dev.reconcile.agent.store.ReplicaStore;
import dev.reconcile.core.Fingerprint;
import dev.reconcile.core.RecordBatches;
import dev.reconcile.core.ReplicaRecord;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.parsetools.RecordParser;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The agent's HTTP API (docs/operations.md): health, metrics, status, self-check, repair on demand
 * and a small key-value API so that applications and tests use the agent as a replica. Store calls
 * run on worker threads, never on the event loop.
 */
final class AdminApi {
  static final String VERSION_HEADER = "X-Reconcile-Version";
  static final String ORIGIN_HEADER = "X-Reconcile-Origin";
  private static final int BULK_BATCH = 10_000;
  private static final long MAX_VALUE_BYTES = 8L << 20;

  private final ReplicaAgent agent;
  private final Vertx vertx;
  private final ReplicaStore store;
  private final AgentConfig config;
  private HttpServer server;

  AdminApi(ReplicaAgent agent) {
    this.agent = agent;
    this.vertx = agent.vertx();
    this.store = agent.store();
    this.config = agent.config();
  }

  Future<Integer> listen() {
    Router r = Router.router(vertx);
    r.get("/health").handler(this::health);
    ClusterApi.mountPage(r);
    r.route().handler(this::authenticate);
    ClusterApi.mountData(r, agent::cluster);
    r.get("/metrics").handler(this::metrics);
    r.get("/status").handler(this::status);
    new SketchApi(agent).mount(r);
    r.get("/selfcheck").handler(this::selfCheck);
    r.post("/repair").handler(this::repair);
    r.post("/kv").handler(this::bulk);
    r.get("/kv/*").handler(this::get);
    r.put("/kv/*").handler(BodyHandler.create().setBodyLimit(MAX_VALUE_BYTES)).handler(this::put);
    r.delete("/kv/*").handler(this::delete);
    // HTTP/1.1 only: a client's "Upgrade: h2c" (the JDK's HttpClient asks for it by default) is
    // answered in HTTP/1.1. Upgrading made the first request of a just-started agent load Netty's
    // HTTP/2 stack on the event loop (about 260 classes); nothing here needs HTTP/2
    // (docs/decisions.md).
    HttpServerOptions o =
        new HttpServerOptions()
            .setHost(config.httpListen().host())
            .setPort(config.httpListen().port())
            .setHttp2ClearTextEnabled(false);
    AgentConfig.Security s = config.security();
    if (s.httpTls()) {
      if (!s.peerTls()) {
        return Future.failedFuture("http-tls needs tls-cert and tls-key");
      }
      o.setSsl(true)
          .setKeyCertOptions(
              new PemKeyCertOptions().setCertPath(s.tlsCert()).setKeyPath(s.tlsKey()));
    }
    server = vertx.createHttpServer(o).requestHandler(r);
    return server.listen().map(HttpServer::actualPort);
  }

  Future<Void> close() {
    return server == null ? Future.succeededFuture() : server.close();
  }

  // --------------------------------------------------------------- auth

  private void authenticate(RoutingContext ctx) {
    AgentConfig.Security s = config.security();
    if (s.adminToken() == null && s.readToken() == null) {
      ctx.next();
      return;
    }
    String h = ctx.request().getHeader("Authorization");
    String token = h != null && h.startsWith("Bearer ") ? h.substring(7).trim() : null;
    boolean admin =
        token != null && s.adminToken() != null && constantTimeEquals(token, s.adminToken());
    boolean read =
        admin
            || (token != null && s.readToken() != null && constantTimeEquals(token, s.readToken()));
    boolean writes = !ctx.request().method().name().equals("GET");
    if ((writes && !admin) || (!writes && !read)) {
      agent.metrics().refused("http_unauthorized");
      ctx.response()
          .setStatusCode(token == null ? 401 : 403)
          .putHeader("WWW-Authenticate", "Bearer")
          .putHeader("content-type", "application/json")
          .end(
              error(
                      token == null
                          ? "missing bearer token"
                          : writes ? "this needs the admin token" : "token not accepted")
                  .encode());
      return;
    }
    ctx.next();
  }

  private static boolean constantTimeEquals(String a, String b) {
    return java.security.MessageDigest.isEqual(
        a.getBytes(java.nio.charset.StandardCharsets.UTF_8),
        b.getBytes(java.nio.charset.StandardCharsets.UTF_8));
  }

  // --------------------------------------------------------------- handlers

  /** Scraped on a worker: the RocksDB gauges read the store. */
  private void metrics(RoutingContext ctx) {
    vertx
        .executeBlocking(() -> agent.metrics().scrape(), false)
        .onSuccess(
            text ->
                ctx.response()
                    .putHeader("content-type", "text/plain; version=0.0.4; charset=utf-8")
                    .end(text))
        .onFailure(t -> json(ctx, 500, error("metrics: " + t.getMessage())));
  }

  private void health(RoutingContext ctx) {
    json(ctx, 200, new JsonObject().put("status", "ok").put("nodeId", config.nodeId()));
  }

  private void status(RoutingContext ctx) {
    vertx
        .executeBlocking(
            () -> {
              JsonObject j =
                  new JsonObject()
                      .put("nodeId", config.nodeId())
                      .put("clusterId", config.clusterId())
                      .put("peerPort", agent.peerPort())
                      .put("httpPort", agent.httpPort())
                      .put("records", store.recordCount())
                      .put("activeRounds", agent.activeRounds())
                      .put("repairInterval", Durations.format(config.repairInterval()))
                      .put("sketchRebuildMillis", agent.metrics().lastRebuildMillis.get());
              int n = store.sketches().params().partitions();
              JsonArray parts = new JsonArray();
              for (int p = 0; p < n; p++) {
                Fingerprint f = store.sketches().fingerprint(p);
                parts.add(
                    new JsonObject()
                        .put("partition", p)
                        .put("elements", f.count())
                        .put("fingerprint", Long.toHexString(f.sum() ^ f.sum2())));
              }
              j.put("partitions", parts);
              JsonArray peers = new JsonArray();
              for (HostPort hp : config.peers()) {
                peers.add(new JsonObject().put("peer", hp.toString()));
              }
              j.put("peers", peers);
              JsonObject last = new JsonObject();
              for (Map.Entry<String, RoundReport> e : agent.lastReports().entrySet()) {
                RoundReport rep = e.getValue();
                last.put(
                    e.getKey(),
                    new JsonObject()
                        .put("ok", rep.ok)
                        .put("error", rep.error)
                        .put("at", rep.startedAtMillis)
                        .put("estimatedDifference", rep.estimate)
                        .put("difference", rep.missingLocal + rep.missingRemote)
                        .put("recordsSent", rep.recordsSent)
                        .put("recordsReceived", rep.recordsReceived)
                        .put("durationMillis", rep.durationMillis)
                        .put("stillDiffering", new JsonArray(new ArrayList<>(rep.stillDiffering)))
                        .put("partialPartitions", rep.partialPartitions)
                        .put("clockSkewRefused", rep.clockSkewRefused)
                        .put("clockSkewKeys", new JsonArray(new ArrayList<>(rep.clockSkewKeys))));
              }
              j.put("lastRounds", last);
              return j;
            },
            false)
        .onSuccess(j -> json(ctx, 200, j))
        .onFailure(t -> json(ctx, 500, error(t.getMessage())));
  }

  private void selfCheck(RoutingContext ctx) {
    vertx
        .executeBlocking(store::selfCheck, false)
        .onSuccess(c -> json(ctx, c.ok() ? 200 : 500, SelfCheckJson.of(c)))
        .onFailure(t -> json(ctx, 500, error(t.getMessage())));
  }

  private void repair(RoutingContext ctx) {
    String peer = ctx.request().getParam("peer");
    HostPort hp;
    try {
      hp = HostPort.parse(peer);
    } catch (IllegalArgumentException e) {
      json(ctx, 400, error("peer: " + e.getMessage()));
      return;
    }
    boolean dry = Boolean.parseBoolean(ctx.request().getParam("dryRun", "false"));
    agent
        .repair(hp, dry)
        .onComplete(
            r -> {
              RoundReport rep = r.result();
              json(ctx, rep.ok ? 200 : 502, rep.toJson());
            });
  }

  private byte[] keyOf(RoutingContext ctx) {
    String path = ctx.request().path();
    String raw = path.substring(path.indexOf("/kv/") + 4);
    if (raw.isEmpty()) {
      throw new IllegalArgumentException("empty key");
    }
    byte[] k = KeyCodec.decode(raw);
    if (k.length > RecordBatches.MAX_KEY_BYTES) {
      throw new IllegalArgumentException(
          "key of " + k.length + " bytes exceeds " + RecordBatches.MAX_KEY_BYTES);
    }
    return k;
  }

  /** The key of a {@code /kv/{key}} request, or null after answering 400. */
  private byte[] keyOrBadRequest(RoutingContext ctx) {
    try {
      return keyOf(ctx);
    } catch (IllegalArgumentException e) {
      json(ctx, 400, error(e.getMessage()));
      return null;
    }
  }

  private void get(RoutingContext ctx) {
    byte[] key = keyOrBadRequest(ctx);
    if (key == null) {
      return;
    }
    if (store.surelyLacks(key)) {
      // The store's key filter denies the key: answered here, without a worker thread.
      json(ctx, 404, error("no such key"));
      return;
    }
    vertx
        .executeBlocking(() -> store.get(key).orElse(null), false)
        .onSuccess(
            rec -> {
              if (rec == null || rec.tombstone()) {
                json(ctx, 404, error("no such key"));
                return;
              }
              ctx.response()
                  .putHeader(VERSION_HEADER, Long.toUnsignedString(rec.version()))
                  .putHeader(ORIGIN_HEADER, Long.toUnsignedString(rec.origin()))
                  .putHeader("content-type", "application/octet-stream")
                  .end(Buffer.buffer(rec.value()));
            })
        .onFailure(t -> json(ctx, 500, error(t.getMessage())));
  }

  private void put(RoutingContext ctx) {
    byte[] key = keyOrBadRequest(ctx);
    if (key == null) {
      return;
    }
    byte[] value = ctx.body().buffer() == null ? new byte[0] : ctx.body().buffer().getBytes();
    vertx
        .executeBlocking(() -> store.put(key, value), false)
        .onSuccess(
            v ->
                ctx.response()
                    .setStatusCode(204)
                    .putHeader(VERSION_HEADER, Long.toUnsignedString(v))
                    .end())
        .onFailure(t -> json(ctx, 503, error("write failed: " + t.getMessage())));
  }

  private void delete(RoutingContext ctx) {
    byte[] key = keyOrBadRequest(ctx);
    if (key == null) {
      return;
    }
    vertx
        .executeBlocking(() -> store.delete(key), false)
        .onSuccess(
            v ->
                ctx.response()
                    .setStatusCode(204)
                    .putHeader(VERSION_HEADER, Long.toUnsignedString(v))
                    .end())
        .onFailure(t -> json(ctx, 503, error("write failed: " + t.getMessage())));
  }

  /**
   * Bulk load: the body is lines {@code KEY<TAB>VALUE\n} (percent-encoded, see {@link KeyCodec}),
   * streamed in batches of 10 000 with the request paused while a batch is written.
   */
  private void bulk(RoutingContext ctx) {
    var req = ctx.request();
    RecordParser parser = RecordParser.newDelimited("\n", req);
    parser.maxRecordSize((int) Math.min(Integer.MAX_VALUE, 2 * MAX_VALUE_BYTES));
    List<ReplicaRecord> batch = new ArrayList<>();
    long[] loaded = {0};
    long[] lineNo = {0};
    boolean[] failed = {false};
    Runnable flush =
        () -> {
          List<ReplicaRecord> b = new ArrayList<>(batch);
          batch.clear();
          parser.pause();
          vertx
              .executeBlocking(() -> store.putAll(b), false)
              .onSuccess(
                  n -> {
                    loaded[0] += b.size();
                    parser.resume();
                  })
              .onFailure(
                  t -> {
                    failed[0] = true;
                    json(
                        ctx,
                        503,
                        error(
                            "bulk write failed after "
                                + loaded[0]
                                + " records: "
                                + t.getMessage()));
                  });
        };
    parser.handler(
        line -> {
          if (failed[0]) {
            return;
          }
          lineNo[0]++;
          String s = line.toString(java.nio.charset.StandardCharsets.UTF_8);
          if (s.endsWith("\r")) {
            s = s.substring(0, s.length() - 1);
          }
          if (s.isEmpty()) {
            return;
          }
          int tab = s.indexOf('\t');
          try {
            byte[] k = KeyCodec.decode(tab < 0 ? s : s.substring(0, tab));
            byte[] v = tab < 0 ? new byte[0] : KeyCodec.decode(s.substring(tab + 1));
            if (k.length == 0) {
              throw new IllegalArgumentException("empty key");
            }
            batch.add(new ReplicaRecord(k, v, store.clock().now(), store.origin(), false));
          } catch (IllegalArgumentException e) {
            failed[0] = true;
            json(
                ctx,
                400,
                error(
                    "line "
                        + lineNo[0]
                        + ": "
                        + e.getMessage()
                        + " ("
                        + loaded[0]
                        + " records loaded before it)"));
            return;
          }
          if (batch.size() >= BULK_BATCH) {
            flush.run();
          }
        });
    parser.exceptionHandler(
        t -> {
          if (!failed[0]) {
            failed[0] = true;
            json(ctx, 400, error("bulk body: " + t.getMessage()));
          }
        });
    parser.endHandler(
        v -> {
          if (failed[0]) {
            return;
          }
          List<ReplicaRecord> b = new ArrayList<>(batch);
          batch.clear();
          vertx
              .executeBlocking(() -> store.putAll(b), false)
              .onSuccess(n -> json(ctx, 200, new JsonObject().put("loaded", loaded[0] + b.size())))
              .onFailure(
                  t ->
                      json(
                          ctx,
                          503,
                          error(
                              "bulk write failed after "
                                  + loaded[0]
                                  + " records: "
                                  + t.getMessage())));
        });
  }

  // --------------------------------------------------------------- helpers

  static JsonObject error(String message) {
    return new JsonObject().put("error", message);
  }

  private static void json(RoutingContext ctx, int status, JsonObject body) {
    if (ctx.response().ended()) {
      return;
    }
    ctx.response()
        .setStatusCode(status)
        .putHeader("content-type", "application/json")
        .end(body.encodePrettily());
  }
}
