package dev.reconcile.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.agent.AgentCluster;
import dev.reconcile.agent.AgentConfig;
import dev.reconcile.agent.HostPort;
import dev.reconcile.agent.LocalReplica;
import dev.reconcile.agent.ReplicaAgent;
import dev.reconcile.agent.RoundReport;
import dev.reconcile.core.ReplicaRecord;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code repair} and {@code status} against two agents in this JVM, and between their directories.
 */
class RepairCommandTest {
  @TempDir Path dir;

  private static final long SEED = 20251130L;

  private Map<String, String> config(String node) {
    return AgentCluster.baseConfig(node, dir);
  }

  private ReplicaAgent start(String node) throws Exception {
    return ReplicaAgent.start(AgentConfig.fromMap(config(node)));
  }

  /** Common records on both, records only on each side, conflicting writes and a delete. */
  private static void diverge(LocalReplica a, LocalReplica b) {
    SplittableRandom rnd = new SplittableRandom(SEED);
    long origin = LocalReplica.origin("loader");
    long version = a.newVersion();
    List<ReplicaRecord> common = new ArrayList<>();
    for (int i = 0; i < 3000; i++) {
      common.add(
          new ReplicaRecord(bytes("k" + i), bytes("v" + rnd.nextInt()), version, origin, false));
    }
    a.putAll(common);
    b.putAll(common);
    for (int i = 0; i < 40; i++) {
      a.put(bytes("only-a-" + i), bytes("x" + i));
      b.put(bytes("only-b-" + i), bytes("y" + i));
    }
    for (int i = 0; i < 10; i++) {
      a.put(bytes("k" + i), bytes("from-a"));
      b.put(bytes("k" + i), bytes("from-b"));
    }
    a.delete(bytes("k100"));
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static TreeMap<String, String> contents(LocalReplica s) {
    TreeMap<String, String> m = new TreeMap<>();
    s.forEachRecord(
        r ->
            m.put(
                new String(r.key(), StandardCharsets.ISO_8859_1),
                (r.tombstone() ? "DEL" : new String(r.value(), StandardCharsets.ISO_8859_1))
                    + "@"
                    + r.version()
                    + "/"
                    + r.origin()));
    return m;
  }

  private static String http(ReplicaAgent a) {
    return "agent:127.0.0.1:" + a.httpPort();
  }

  @Test
  void repairBetweenAgentsConvergesAndDryRunMovesNothing() throws Exception {
    try (ReplicaAgent a = start("a");
        ReplicaAgent b = start("b")) {
      diverge(LocalReplica.of(a), LocalReplica.of(b));
      TreeMap<String, String> beforeA = contents(LocalReplica.of(a));
      TreeMap<String, String> beforeB = contents(LocalReplica.of(b));
      assertThat(beforeA).isNotEqualTo(beforeB);

      Cli.Result dry = Cli.runProduction("repair", http(a), http(b), "--dry-run");
      assertThat(dry.status()).as("stderr: %s", dry.err()).isZero();
      assertThat(dry.out())
          .contains("dry run:")
          .contains("nothing moved")
          .contains("difference 102");
      assertThat(contents(LocalReplica.of(a))).isEqualTo(beforeA);
      assertThat(contents(LocalReplica.of(b))).isEqualTo(beforeB);

      Cli.Result r = Cli.runProduction("repair", http(a), http(b));
      assertThat(r.status()).as("stderr: %s", r.err()).isZero();
      assertThat(r.out()).contains("repaired:").contains("records left -> right");
      assertThat(contents(LocalReplica.of(a))).isEqualTo(contents(LocalReplica.of(b)));
      assertThat(contents(LocalReplica.of(a))).containsKey("only-b-7").containsKey("only-a-3");

      Cli.Result again = Cli.runProduction("repair", http(a), http(b));
      assertThat(again.status()).isZero();
      assertThat(again.out()).contains("difference 0");
    }
  }

  @Test
  void statusPrintsTheNodeAndLastRounds() throws Exception {
    try (ReplicaAgent a = start("alpha");
        ReplicaAgent b = start("beta")) {
      diverge(LocalReplica.of(a), LocalReplica.of(b));
      Cli.Result s = Cli.runProduction("status", "127.0.0.1:" + a.httpPort());
      assertThat(s.status()).as("stderr: %s", s.err()).isZero();
      assertThat(s.out())
          .startsWith("node alpha (cluster test): 3,040 records in 8 partitions")
          .contains("last rounds: none yet");
      assertThat(Cli.runProduction("repair", http(a), http(b)).status()).isZero();
      Cli.Result after = Cli.runProduction("status", http(a), "--partitions");
      assertThat(after.status()).isZero();
      assertThat(after.out())
          .contains("127.0.0.1:" + b.peerPort() + ": ok at")
          .contains("partition     7:");
      Cli.Result json = Cli.runProduction("status", http(b), "--json");
      assertThat(json.out()).contains("\"nodeId\" : \"beta\"");
    }
  }

  @Test
  void badAddressesAreOneLineErrorsWithStatus2() throws Exception {
    try (ReplicaAgent a = start("a")) {
      Cli.Result noPort = Cli.runProduction("repair", "agent:localhost", http(a));
      assertThat(noPort.status()).isEqualTo(2);
      assertThat(noPort.errLines())
          .singleElement()
          .asString()
          .contains("agent:localhost: expected agent:HOST:PORT");

      Cli.Result refused = Cli.runProduction("repair", http(a), "agent:127.0.0.1:1");
      assertThat(refused.status()).isEqualTo(2);
      assertThat(refused.errLines())
          .singleElement()
          .asString()
          .startsWith("reconcile: agent:127.0.0.1:1: cannot connect to 127.0.0.1:1");

      Cli.Result mixed = Cli.runProduction("repair", http(a), "rocksdb:" + dir);
      assertThat(mixed.status()).isEqualTo(2);
      assertThat(mixed.errLines())
          .singleElement()
          .asString()
          .contains("both sides must be agents or both directories");

      Cli.Result unknown = Cli.runProduction("repair", "a.tsv", "b.tsv");
      assertThat(unknown.status()).isEqualTo(2);
      assertThat(unknown.errLines())
          .singleElement()
          .asString()
          .contains("a.tsv: expected agent:HOST:PORT");

      Cli.Result status = Cli.runProduction("status", "127.0.0.1:1");
      assertThat(status.status()).isEqualTo(2);
      assertThat(status.errLines())
          .singleElement()
          .asString()
          .contains("cannot connect to 127.0.0.1:1");

      Cli.Result garbage = Cli.runProduction("status", "not-an-address");
      assertThat(garbage.status()).isEqualTo(2);
      assertThat(garbage.errLines()).singleElement().asString().contains("expected HOST:PORT");

      Cli.Result running =
          Cli.runProduction(
              "repair", "rocksdb:" + dir.resolve("a"), "rocksdb:" + dir.resolve("nothing"));
      assertThat(running.status()).isEqualTo(2);
      assertThat(running.errLines()).singleElement().asString().contains("not a RocksDB directory");
    }
  }

  @Test
  void repairBetweenStoppedAgentDirectories() throws Exception {
    TreeMap<String, String> beforeA;
    TreeMap<String, String> beforeB;
    try (ReplicaAgent a = start("a");
        ReplicaAgent b = start("b")) {
      diverge(LocalReplica.of(a), LocalReplica.of(b));
      beforeA = contents(LocalReplica.of(a));
      beforeB = contents(LocalReplica.of(b));
    }
    String[] params = {
      "--hash-seed", "test-seed", "--partitions-log2", "3", "--iblt-max-log2", "12"
    };
    String left = "rocksdb:" + dir.resolve("a");
    String right = "rocksdb:" + dir.resolve("b");

    Cli.Result dry = Cli.run(concat(new String[] {"repair", left, right, "--dry-run"}, params));
    assertThat(dry.status()).as("stderr: %s", dry.err()).isZero();
    assertThat(dry.out()).contains("difference 102").contains("nothing moved");

    Cli.Result wrongSeed = Cli.run("repair", left, right, "--partitions-log2", "3");
    assertThat(wrongSeed.status()).isEqualTo(2);
    assertThat(wrongSeed.errLines()).singleElement().asString().contains("seed fingerprint");

    Cli.Result r = Cli.run(concat(new String[] {"repair", left, right}, params));
    assertThat(r.status()).as("stderr: %s", r.err()).isZero();
    assertThat(r.out()).contains("replicas match");

    try (ReplicaAgent a = start("a");
        ReplicaAgent b = start("b")) {
      assertThat(contents(LocalReplica.of(a))).isEqualTo(contents(LocalReplica.of(b)));
      assertThat(contents(LocalReplica.of(a))).containsAllEntriesOf(onlyKeysOf(beforeB, "only-b-"));
      assertThat(contents(LocalReplica.of(b))).containsAllEntriesOf(onlyKeysOf(beforeA, "only-a-"));
    }
  }

  /**
   * A record whose version lies two hours ahead (more than max-clock-skew, 1 h) on each side: the
   * directory repair refuses both, moves everything else, reports the refusals and the partitions
   * that still differ, and exits 2; two agents on the same directories then refuse the same record
   * and leave the same partitions differing.
   */
  @Test
  void directoryRepairRefusesRecordsFromTheFutureAsAgentsDo() throws Exception {
    long future = ReplicaRecord.version(System.currentTimeMillis() + 2 * 3_600_000L, 0);
    long skewed = LocalReplica.origin("skewed-writer");
    try (ReplicaAgent a = start("a");
        ReplicaAgent b = start("b")) {
      diverge(LocalReplica.of(a), LocalReplica.of(b));
      LocalReplica.of(a)
          .putAll(
              List.of(new ReplicaRecord(bytes("ahead-on-a"), bytes("x"), future, skewed, false)));
      LocalReplica.of(b)
          .putAll(
              List.of(new ReplicaRecord(bytes("ahead-on-b"), bytes("y"), future, skewed, false)));
    }
    String left = "rocksdb:" + dir.resolve("a");
    String right = "rocksdb:" + dir.resolve("b");
    Cli.Result r =
        Cli.run(
            "repair",
            left,
            right,
            "--hash-seed",
            "test-seed",
            "--partitions-log2",
            "3",
            "--iblt-max-log2",
            "12");
    assertThat(r.status()).as("stdout: %s", r.out()).isEqualTo(2);
    assertThat(r.out())
        .contains("repaired:")
        .contains("difference 104")
        .containsPattern(
            "records left -> right \\d+ \\(applied \\d+, stale \\d+, duplicate \\d+\\),"
                + " right -> left \\d+ \\(applied \\d+, stale \\d+, duplicate \\d+\\)")
        .contains("refused for clock skew (version more than 1h ahead of this machine's clock)")
        .contains("by left 1 (keys ahead-on-b), by right 1")
        .doesNotContain("replicas match");
    String error = r.errLines().get(0);
    assertThat(r.errLines()).hasSize(1);
    assertThat(error).contains("still differ").contains("(2 refused for clock skew)");

    try (ReplicaAgent a = start("a");
        ReplicaAgent b = start("b")) {
      TreeMap<String, String> onA = contents(LocalReplica.of(a));
      TreeMap<String, String> onB = contents(LocalReplica.of(b));
      assertThat(onA).doesNotContainKey("ahead-on-b").containsKey("only-b-7");
      assertThat(onB).doesNotContainKey("ahead-on-a").containsKey("only-a-7");
      onA.remove("ahead-on-a");
      onB.remove("ahead-on-b");
      assertThat(onA).isEqualTo(onB);

      RoundReport agents =
          a.repair(new HostPort("127.0.0.1", b.peerPort()), false)
              .toCompletionStage()
              .toCompletableFuture()
              .get(1, TimeUnit.MINUTES);
      assertThat(agents.ok).as("error: %s", agents.error).isTrue();
      assertThat(agents.clockSkewRefused).isEqualTo(1);
      assertThat(agents.clockSkewKeys).containsExactly("ahead-on-b");
      assertThat(agents.missingLocal + agents.missingRemote).isEqualTo(2);
      assertThat(error).contains("partitions " + agents.stillDiffering + " still differ");
    }
  }

  private static Map<String, String> onlyKeysOf(TreeMap<String, String> m, String prefix) {
    Map<String, String> r = new TreeMap<>();
    m.forEach(
        (k, v) -> {
          if (k.startsWith(prefix)) {
            r.put(k, v);
          }
        });
    assertThat(r).hasSize(40);
    return r;
  }

  private static String[] concat(String[] a, String[] b) {
    String[] r = new String[a.length + b.length];
    System.arraycopy(a, 0, r, 0, a.length);
    System.arraycopy(b, 0, r, a.length, b.length);
    return r;
  }
}
