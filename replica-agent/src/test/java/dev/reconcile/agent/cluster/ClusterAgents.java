package dev.reconcile.agent.cluster;

import dev.reconcile.agent.AgentCluster;
import dev.reconcile.agent.AgentConfig;
import dev.reconcile.agent.ReplicaAgent;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Agents in cluster mode in one JVM, on loopback, for tests. */
final class ClusterAgents implements AutoCloseable {
  private final Path dir;
  final List<ReplicaAgent> agents = new ArrayList<>();
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  ClusterAgents(Path dir) {
    this.dir = dir;
  }

  /** Base config plus cluster mode on {@code clusterPort}, joining through {@code seeds}. */
  Map<String, String> config(String node, int clusterPort, String seeds) {
    Map<String, String> m = AgentCluster.baseConfig(node, dir);
    m.put("cluster-listen", "127.0.0.1:" + clusterPort);
    m.put("cluster-seeds", seeds);
    m.put("cluster-failure-timeout", "4s");
    m.put("repair-interval", "200ms");
    m.put("repair-jitter", "0.3");
    return m;
  }

  ReplicaAgent start(Map<String, String> config) throws Exception {
    ReplicaAgent a = ReplicaAgent.start(AgentConfig.fromMap(config));
    agents.add(a);
    return a;
  }

  void stop(ReplicaAgent a) {
    agents.remove(a);
    a.close();
  }

  JsonObject get(ReplicaAgent a, String path, String token) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + a.httpPort() + path))
            .timeout(Duration.ofSeconds(20));
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    HttpResponse<String> r =
        http.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    JsonObject j = new JsonObject(r.body());
    j.put("_status", r.statusCode());
    return j;
  }

  @Override
  public void close() {
    for (ReplicaAgent a : agents) {
      a.close();
    }
    agents.clear();
  }
}
