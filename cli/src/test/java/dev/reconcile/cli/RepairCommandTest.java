package dev.reconcile.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.agent.AgentConfig;
import dev.reconcile.agent.ReplicaAgent;
import dev.reconcile.agent.store.NodeIds;
import dev.reconcile.agent.store.ReplicaStore;
import dev.reconcile.core.ReplicaRecord;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code repair} and {@code status} against two agents in this JVM, and between their directories.
 */
class RepairCommandTest {
  @TempDir Path dir;

  private static final long SEED = 20251130L;

  private Map<String, String> config(String node) {
    return dev.reconcile.agent.AgentCluster.baseConfig(node, dir);
  }

  private ReplicaAgent start(String node) throws Exception {
    return ReplicaAgent.start(AgentConfig.fromMap(config(node)));
  }

  /** Common records on both, records only on each side, conflicting writes and a delete. */
  private static void diverge(ReplicaStore a, ReplicaStore b) {
    SplittableRandom rnd = new SplittableRandom(SEED);
    long origin = NodeIds.origin("loader");
    long version = a.clock().now();
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

  static TreeMap<String, String> contents(ReplicaStore s) {
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
      diverge(a.store(), b.store());
      TreeMap<String, String> beforeA = contents(a.store());
      TreeMap<String, String> beforeB = contents(b.store());
      assertThat(beforeA).isNotEqualTo(beforeB);

      Cli.Result dry = Cli.runProduction("repair", http(a), http(b), "--dry-run");
      assertThat(dry.status()).as("stderr: %s", dry.err()).isZero();
      assertThat(dry.out())
          .contains("dry run:")
          .contains("nothing moved")
          .contains("difference 102");
      assertThat(contents(a.store())).isEqualTo(beforeA);
      assertThat(contents(b.store())).isEqualTo(beforeB);

      Cli.Result r = Cli.runProduction("repair", http(a), http(b));
      assertThat(r.status()).as("stderr: %s", r.err()).isZero();
      assertThat(r.out()).contains("repaired:").contains("records left -> right");
      assertThat(contents(a.store())).isEqualTo(contents(b.store()));
      assertThat(contents(a.store())).containsKey("only-b-7").containsKey("only-a-3");

      Cli.Result again = Cli.runProduction("repair", http(a), http(b));
      assertThat(again.status()).isZero();
      assertThat(again.out()).contains("difference 0");
    }
  }

  @Test
  void statusPrintsTheNodeAndLastRounds() throws Exception {
    try (ReplicaAgent a = start("alpha");
        ReplicaAgent b = start("beta")) {
      diverge(a.store(), b.store());
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
      diverge(a.store(), b.store());
      beforeA = contents(a.store());
      beforeB = contents(b.store());
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
      assertThat(contents(a.store())).isEqualTo(contents(b.store()));
      assertThat(contents(a.store())).containsAllEntriesOf(onlyKeysOf(beforeB, "only-b-"));
      assertThat(contents(b.store())).containsAllEntriesOf(onlyKeysOf(beforeA, "only-a-"));
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
