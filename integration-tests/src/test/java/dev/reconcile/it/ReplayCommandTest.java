package dev.reconcile.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.reconcile.agent.AgentConfig;
import dev.reconcile.agent.AgentTestHooks;
import dev.reconcile.agent.ReplicaAgent;
import dev.reconcile.agent.store.HybridClock;
import dev.reconcile.agent.store.ReplicaStore;
import dev.reconcile.agent.store.StoreOptions;
import dev.reconcile.cli.AgentJvm;
import dev.reconcile.cli.HookedAgentMain;
import dev.reconcile.cli.ReconcileCommand;
import dev.reconcile.cli.replay.ProcessCluster;
import dev.reconcile.cli.replay.ScenarioRunner;
import dev.reconcile.cli.replay.TestHookKeys;
import dev.reconcile.estimator.EstimatorKinds;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code reconcile replay} end to end: from-dirs, reports, exit statuses, the results file; and the
 * agent's test hooks, which are not config keys.
 */
class ReplayCommandTest {
  @TempDir Path dir;

  record Run(int status, String out, String err) {}

  static Run replay(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = ReconcileCommand.commandLine(new ReconcileCommand());
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    String[] all = new String[args.length + 1];
    all[0] = "replay";
    System.arraycopy(args, 0, all, 1, args.length);
    int status = cl.execute(all);
    return new Run(status, out.toString(), err.toString());
  }

  /** A stopped replica's data directory as a production agent would leave it. */
  private Path dataDir(String name, int from, int to, String value) {
    Path d = dir.resolve("captured-" + name);
    Map<String, String> cfg =
        ScenarioRunner.agentConfig(
            new dev.reconcile.cli.replay.Scenario(
                null,
                "x",
                "",
                Map.of(name, Map.of()),
                Map.of(),
                null,
                null,
                java.util.List.of(),
                null),
            name,
            d);
    AgentConfig ac = AgentConfig.fromMap(cfg);
    var est = EstimatorKinds.defaults();
    try (ReplicaStore s =
        ReplicaStore.open(
            StoreOptions.builder(d, ReplicaAgent.sketchParams(ac, est), est)
                .nodeId(name)
                .build())) {
      for (int i = from; i < to; i++) {
        s.put(
            ("key" + i).getBytes(StandardCharsets.UTF_8),
            (value + i).getBytes(StandardCharsets.UTF_8));
      }
      s.delete("key5".getBytes(StandardCharsets.UTF_8));
    }
    return d;
  }

  @Test
  void replaysADivergenceCapturedInTwoDataDirectoriesAndWritesResults() throws Exception {
    Path a = dataDir("a", 0, 800, "from-a-");
    Path b = dataDir("b", 500, 1200, "from-b-");
    Path sc = dir.resolve("captured.yaml");
    Files.writeString(
        sc,
        "description: two captured replicas\nreplicas: [a, b]\ninitial:\n  from-dirs: {a: "
            + a
            + ", b: "
            + b
            + "}\n"
            + "timeline:\n  - repair: {from: a, to: b, expect: ok}\nexpect:\n  converge: {rounds: 1}\n");
    Path results = dir.resolve("out/results.md");
    Run r = replay("--results", results.toString(), sc.toString());
    assertThat(r.status()).as(r.out() + r.err()).isZero();
    assertThat(r.out())
        .contains(
            "scenario captured (jvm, 2 replicas): PASS",
            "final state equals the model",
            "1 passed, 0 failed");
    assertThat(Files.readString(results)).contains("| captured | jvm | 2 | 1501 |", "## Checks");
    // The captured directories themselves are untouched (the run works on copies).
    assertThat(Files.exists(a.resolve("LOCK")) || Files.isDirectory(a)).isTrue();
  }

  @Test
  void failedExpectationExitsOneAndBadFileExitsTwo() throws Exception {
    Path sc = dir.resolve("impossible.yaml");
    Files.writeString(
        sc,
        """
        description: expects doublings that cannot happen
        replicas: [a, b]
        timeline:
          - write: {on: a, count: 10}
          - repair: {from: a, to: b}
        expect:
          min-doublings: 1000
        """);
    Run r = replay(sc.toString());
    assertThat(r.status()).as(r.out() + r.err()).isEqualTo(1);
    assertThat(r.out()).contains("[FAIL] at least 1000 table doublings", "0 passed, 1 failed");

    Path bad = dir.resolve("bad.yaml");
    Files.writeString(bad, "replicas: [a, b]\ntimeline:\n  - write: {on: z, count: 1}\n");
    Run b = replay(bad.toString());
    assertThat(b.status()).isEqualTo(2);
    assertThat(b.err())
        .contains("scenario " + bad + ": timeline[0].write.on: no replica named 'z'");
  }

  private static Map<String, String> agentKeys(Path data) {
    Map<String, String> m = new HashMap<>(ScenarioRunner.BASE);
    m.put("node-id", "skewed");
    m.put("data", data.toString());
    m.put("peer-listen", "127.0.0.1:0");
    m.put("http-listen", "127.0.0.1:0");
    return m;
  }

  @Test
  void testHooksAreNotAgentConfigKeys() {
    for (String key : TestHookKeys.KEYS) {
      Map<String, String> m = agentKeys(dir.resolve("x"));
      m.put(key, "1");
      assertThatThrownBy(() -> AgentConfig.fromMap(m))
          .hasMessageContaining("unknown config key '" + key + "'");
    }
  }

  @Test
  void clockOffsetHookSkewsTheVersionsOfLocalWrites() throws Exception {
    AgentConfig c = AgentConfig.fromMap(agentKeys(dir.resolve("skewed")));
    AgentTestHooks hooks = TestHookKeys.parse(Map.of("clock-offset", "-1h"));
    assertThat(hooks.clockOffset()).isEqualTo(Duration.ofHours(-1));
    assertThat(hooks.estimatorScale()).isEqualTo(1.0);
    try (ReplicaAgent a = ReplicaAgent.start(c, EstimatorKinds.defaults(), hooks)) {
      long v = a.store().put(new byte[] {1}, new byte[] {2});
      long behind = System.currentTimeMillis() - HybridClock.physicalMillis(v);
      assertThat(behind).isBetween(3_500_000L, 3_700_000L);
    }
  }

  /** A process replica gets its hooks as arguments of HookedAgentMain, not as config keys. */
  @Test
  void hookedAgentProcessSkewsItsClock() throws Exception {
    Path jar = ProcessCluster.locateJar();
    assertThat(jar).isRegularFile();
    List<String> cmd = new ArrayList<>();
    cmd.add(AgentJvm.JAVA.toString());
    cmd.addAll(List.of("-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp", jar.toString()));
    List<String> options = new ArrayList<>();
    agentKeys(dir.resolve("proc"))
        .forEach(
            (k, v) -> {
              options.add("--set");
              options.add(k + "=" + v);
            });
    cmd.addAll(HookedAgentMain.args(TestHookKeys.parse(Map.of("clock-offset", "-2h")), options));
    Process p =
        new ProcessBuilder(cmd)
            .redirectError(ProcessBuilder.Redirect.appendTo(dir.resolve("proc.log").toFile()))
            .start();
    try (var lines =
        new java.io.BufferedReader(
            new java.io.InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      String line = lines.readLine();
      assertThat(line).as("log: %s", Files.readString(dir.resolve("proc.log"))).isNotNull();
      java.util.regex.Matcher m =
          java.util.regex.Pattern.compile("http=(\\S+):(\\d+)").matcher(line);
      assertThat(m.find()).as(line).isTrue();
      HttpClient http = HttpClient.newHttpClient();
      HttpResponse<String> put =
          http.send(
              HttpRequest.newBuilder(
                      URI.create("http://" + m.group(1) + ":" + m.group(2) + "/kv/skew"))
                  .PUT(HttpRequest.BodyPublishers.ofString("v"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(put.statusCode()).isEqualTo(204);
      long v =
          Long.parseUnsignedLong(put.headers().firstValue("X-Reconcile-Version").orElseThrow());
      long behind = System.currentTimeMillis() - HybridClock.physicalMillis(v);
      assertThat(behind).isBetween(7_100_000L, 7_300_000L);
    } finally {
      p.destroy();
      p.waitFor(20, java.util.concurrent.TimeUnit.SECONDS);
    }
  }
}
