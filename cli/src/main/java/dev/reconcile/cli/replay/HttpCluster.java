package dev.reconcile.cli.replay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.reconcile.agent.AgentTestHooks;
import dev.reconcile.agent.KeyCodec;
import dev.reconcile.cli.HookedAgentMain;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Agents driven only over their HTTP API (PUT/GET/DELETE /kv, POST /repair, GET /status, GET
 * /selfcheck): the base of the process and container clusters. Subclasses launch an agent with
 * {@code reconcile agent} ({@link HookedAgentMain} when the scenario sets test hooks) and return
 * the addresses from its {@code agent ID listening peer=.. http=..} line.
 */
public abstract class HttpCluster implements Cluster {
  private static final Pattern LISTENING =
      Pattern.compile("agent (\\S+) listening peer=(\\S+):(\\d+) http=(\\S+):(\\d+)");
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Where a launched agent listens. */
  protected record Endpoint(InetSocketAddress peer, InetSocketAddress http) {}

  private final HttpClient client =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final Map<String, Map<String, String>> configs = new ConcurrentHashMap<>();
  private final Map<String, AgentTestHooks> hooks = new ConcurrentHashMap<>();
  private final Map<String, Integer> indexes = new ConcurrentHashMap<>();
  private final Map<String, Endpoint> endpoints = new ConcurrentHashMap<>();
  private final Map<String, InetSocketAddress> lastPeer = new ConcurrentHashMap<>();

  /**
   * Launches replica {@code name} with the full config (listen addresses included); returns once it
   * listens.
   */
  protected abstract Endpoint launch(
      String name, int index, Map<String, String> config, AgentTestHooks hooks) throws Exception;

  /** Kills the replica abruptly. */
  protected abstract void kill(String name) throws Exception;

  /** Parses the agent's start-up line, or returns null. */
  protected static Endpoint parseListening(String line) {
    Matcher m = LISTENING.matcher(line);
    if (!m.find()) {
      return null;
    }
    return new Endpoint(
        new InetSocketAddress(m.group(2), Integer.parseInt(m.group(3))),
        new InetSocketAddress(m.group(4), Integer.parseInt(m.group(5))));
  }

  /**
   * The java arguments after the JVM options: {@code -jar JAR agent --set KEY=VALUE ...}, or with
   * test hooks {@code -cp JAR dev.reconcile.cli.HookedAgentMain --clock-offset .. --set ...}.
   */
  protected static List<String> javaArgs(
      String jar, Map<String, String> config, AgentTestHooks hooks) {
    List<String> options = new ArrayList<>();
    for (Map.Entry<String, String> e : config.entrySet()) {
      options.add("--set");
      options.add(e.getKey() + "=" + e.getValue());
    }
    List<String> a = new ArrayList<>();
    if (hooks.none()) {
      a.addAll(List.of("-jar", jar, "agent"));
      a.addAll(options);
    } else {
      a.addAll(List.of("-cp", jar));
      a.addAll(HookedAgentMain.args(hooks, options));
    }
    return a;
  }

  @Override
  public void start(String name, int index, Map<String, String> config, AgentTestHooks hooks)
      throws Exception {
    Map<String, String> c = new HashMap<>(config);
    c.put("peer-listen", bindHost(index) + ":0");
    c.put("http-listen", bindHost(index) + ":0");
    configs.put(name, c);
    indexes.put(name, index);
    this.hooks.put(name, hooks);
    up(name);
  }

  private void up(String name) throws Exception {
    Endpoint e = launch(name, indexes.get(name), configs.get(name), hooks.get(name));
    endpoints.put(name, e);
    lastPeer.put(name, e.peer());
  }

  @Override
  public InetSocketAddress peerAddress(String name) {
    return lastPeer.get(name);
  }

  /** The agent's current HTTP address, or null while it is down. */
  public InetSocketAddress httpAddress(String name) {
    Endpoint e = endpoints.get(name);
    return e == null ? null : e.http();
  }

  @Override
  public boolean running(String name) {
    return endpoints.containsKey(name);
  }

  @Override
  public void crash(String name) throws Exception {
    if (endpoints.remove(name) != null) {
      kill(name);
    }
  }

  @Override
  public void restart(String name) throws Exception {
    if (!endpoints.containsKey(name)) {
      up(name);
    }
  }

  private URI uri(String name, String pathAndQuery) {
    Endpoint e = endpoints.get(name);
    if (e == null) {
      throw new IllegalStateException("replica " + name + " is down");
    }
    return URI.create(
        "http://" + e.http().getHostString() + ":" + e.http().getPort() + pathAndQuery);
  }

  private HttpResponse<byte[]> send(HttpRequest r) throws IOException, InterruptedException {
    return client.send(r, HttpResponse.BodyHandlers.ofByteArray());
  }

  private long version(String what, HttpResponse<byte[]> r) {
    if (r.statusCode() != 204) {
      throw new IllegalStateException(
          what
              + ": HTTP "
              + r.statusCode()
              + " "
              + new String(r.body(), java.nio.charset.StandardCharsets.UTF_8));
    }
    return Long.parseUnsignedLong(
        r.headers()
            .firstValue("X-Reconcile-Version")
            .orElseThrow(
                () -> new IllegalStateException(what + ": no X-Reconcile-Version header")));
  }

  @Override
  public long put(String name, byte[] key, byte[] value) throws Exception {
    return version(
        "PUT on " + name,
        send(
            HttpRequest.newBuilder(uri(name, "/kv/" + KeyCodec.encode(key)))
                .timeout(Duration.ofSeconds(30))
                .PUT(HttpRequest.BodyPublishers.ofByteArray(value))
                .build()));
  }

  @Override
  public long delete(String name, byte[] key) throws Exception {
    return version(
        "DELETE on " + name,
        send(
            HttpRequest.newBuilder(uri(name, "/kv/" + KeyCodec.encode(key)))
                .timeout(Duration.ofSeconds(30))
                .DELETE()
                .build()));
  }

  @Override
  public RoundResult repair(String from, String to, InetSocketAddress via) throws Exception {
    long t0 = System.nanoTime();
    HttpResponse<byte[]> r;
    try {
      r =
          send(
              HttpRequest.newBuilder(
                      uri(from, "/repair?peer=" + via.getHostString() + ":" + via.getPort()))
                  .timeout(Duration.ofMinutes(10))
                  .POST(HttpRequest.BodyPublishers.noBody())
                  .build());
    } catch (IOException e) {
      return new RoundResult(
          from, to, false, "HTTP: " + e, 0, 0, 0, 0, 0, 0, (System.nanoTime() - t0) / 1_000_000);
    }
    JsonNode j;
    try {
      j = JSON.readTree(r.body());
    } catch (IOException e) {
      return new RoundResult(
          from,
          to,
          false,
          "HTTP " + r.statusCode() + ": not JSON",
          0,
          0,
          0,
          0,
          0,
          0,
          (System.nanoTime() - t0) / 1_000_000);
    }
    JsonNode p = j.path("protocol");
    return new RoundResult(
        from,
        to,
        j.path("ok").asBoolean(false),
        j.path("error").isNull() ? null : j.path("error").asText(null),
        p.path("protocolBytes").asLong(),
        j.path("recordsSent").asLong() + j.path("recordsReceived").asLong(),
        j.path("recordBytesSent").asLong() + j.path("recordBytesReceived").asLong(),
        j.path("difference").asLong(),
        p.path("doublings").asInt(),
        p.path("fallbacks").asInt(),
        j.path("durationMillis").asLong());
  }

  @Override
  public List<String> fingerprints(String name) throws Exception {
    HttpResponse<byte[]> r =
        send(
            HttpRequest.newBuilder(uri(name, "/status"))
                .timeout(Duration.ofSeconds(30))
                .GET()
                .build());
    if (r.statusCode() != 200) {
      throw new IllegalStateException("GET /status on " + name + ": HTTP " + r.statusCode());
    }
    List<String> out = new ArrayList<>();
    for (JsonNode p : JSON.readTree(r.body()).path("partitions")) {
      out.add(p.path("elements").asLong() + "/" + p.path("fingerprint").asText());
    }
    return out;
  }

  @Override
  public Map<String, Observed> read(String name, List<String> keys) throws Exception {
    Map<String, Observed> out = new ConcurrentHashMap<>();
    Semaphore inFlight = new Semaphore(32);
    List<CompletableFuture<Void>> all = new ArrayList<>();
    for (String k : keys) {
      inFlight.acquire();
      HttpRequest req =
          HttpRequest.newBuilder(uri(name, "/kv/" + KeyCodec.encode(Model.keyBytes(k))))
              .timeout(Duration.ofSeconds(30))
              .GET()
              .build();
      all.add(
          client
              .sendAsync(req, HttpResponse.BodyHandlers.ofByteArray())
              .thenAccept(
                  r -> {
                    if (r.statusCode() == 200) {
                      out.put(
                          k,
                          new Observed(
                              Long.parseUnsignedLong(
                                  r.headers().firstValue("X-Reconcile-Version").orElse("0")),
                              Long.parseUnsignedLong(
                                  r.headers().firstValue("X-Reconcile-Origin").orElse("0")),
                              r.body(),
                              false));
                    } else if (r.statusCode() != 404) {
                      throw new IllegalStateException(
                          "GET on " + name + ": HTTP " + r.statusCode());
                    }
                  })
              .whenComplete((v, t) -> inFlight.release()));
    }
    CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0])).get();
    return out;
  }

  @Override
  public boolean selfCheck(String name) throws Exception {
    return send(HttpRequest.newBuilder(uri(name, "/selfcheck"))
                .timeout(Duration.ofMinutes(2))
                .GET()
                .build())
            .statusCode()
        == 200;
  }

  @Override
  public void close() {
    for (String n : new ArrayList<>(endpoints.keySet())) {
      endpoints.remove(n);
      try {
        stop(n);
      } catch (Exception e) {
        // best effort
      }
    }
  }

  /** Orderly stop at the end of a run (SIGTERM, docker stop); defaults to a kill. */
  protected void stop(String name) throws Exception {
    kill(name);
  }
}
