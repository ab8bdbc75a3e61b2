package dev.reconcile.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.agent.AgentTestHooks;
import dev.reconcile.cli.replay.Cluster;
import dev.reconcile.cli.replay.InJvmCluster;
import dev.reconcile.cli.replay.ProcessCluster;
import dev.reconcile.cli.replay.RoundResult;
import dev.reconcile.cli.replay.ScenarioRunner;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The replay's "protocol bytes" (docs/replay.md) are {@code SessionStats.protocolBytes()}: the
 * session's frames both ways without the repair stream's record batches, in both runners (this JVM
 * reads the round's report, the process runner its JSON). The same difference of 100 listed records
 * costs about the same protocol bytes whether a value holds 100 B or 32 KiB, while the record bytes
 * grow 300-fold.
 */
class ReplayProtocolBytesTest {
  private static final int COMMON = 500;
  private static final int MISSING = 100;

  @TempDir Path dir;

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"jvm", "process"})
  void protocolBytesLeaveTheRecordBatchesOut(String mode) throws Exception {
    RoundResult small = round(mode, 100);
    RoundResult large = round(mode, 32 * 1024);
    for (RoundResult r : new RoundResult[] {small, large}) {
      assertThat(r.ok()).as("%s", r).isTrue();
      assertThat(r.recordsMoved()).as("%s", r).isEqualTo(MISSING);
      assertThat(r.protocolBytes()).as("%s", r).isPositive();
    }
    assertThat(large.recordBytes()).as("%s", large).isGreaterThanOrEqualTo(MISSING * 32 * 1024L);
    // Every listed record crossed in a record batch of the session: counted, the 3.2 MB would
    // show here.
    assertThat(large.protocolBytes())
        .as("protocol bytes of 32 KiB values, %s; of 100 B values, %s", large, small)
        .isLessThan(large.recordBytes() / 50)
        .isLessThan(2 * small.protocolBytes() + 4096);
  }

  private RoundResult round(String mode, int valueBytes) throws Exception {
    Path run = dir.resolve(mode + "-" + valueBytes);
    Cluster c =
        mode.equals("jvm")
            ? new InJvmCluster()
            : new ProcessCluster(locatedJar(), run.resolve("logs"));
    try (c) {
      for (int i = 0; i < 2; i++) {
        String name = i == 0 ? "a" : "b";
        Map<String, String> config = new HashMap<>(ScenarioRunner.BASE);
        config.put("node-id", name);
        config.put("data", run.resolve(name).toString());
        c.start(name, i, config, AgentTestHooks.NONE);
      }
      Random rnd = new Random(valueBytes);
      write(c, rnd, 0, COMMON, valueBytes);
      // b takes a's first records (versions and all) in a round of its own, then a gets more.
      RoundResult first = c.repair("b", "a", c.peerAddress("a"));
      assertThat(first.ok()).as("%s", first).isTrue();
      assertThat(first.recordsMoved()).as("%s", first).isEqualTo(COMMON);
      write(c, rnd, COMMON, COMMON + MISSING, valueBytes);
      return c.repair("b", "a", c.peerAddress("a"));
    }
  }

  private static void write(Cluster c, Random rnd, int from, int to, int valueBytes)
      throws Exception {
    for (int k = from; k < to; k++) {
      byte[] value = new byte[valueBytes];
      rnd.nextBytes(value);
      c.put("a", ("key-" + k).getBytes(StandardCharsets.UTF_8), value);
    }
  }

  private static Path locatedJar() {
    Path jar = ProcessCluster.locateJar();
    assertThat(Files.isRegularFile(jar))
        .as("agent jar %s (package the cli module first)", jar)
        .isTrue();
    return jar;
  }
}
