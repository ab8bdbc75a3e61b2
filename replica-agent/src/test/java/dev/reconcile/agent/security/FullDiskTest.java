package dev.reconcile.agent.security;

import static dev.reconcile.agent.security.Agents.assertConverged;
import static dev.reconcile.agent.security.Agents.contents;
import static dev.reconcile.agent.security.Agents.load;
import static dev.reconcile.agent.security.Agents.repair;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.reconcile.agent.ReplicaAgent;
import dev.reconcile.agent.RoundReport;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real full disk during repair: the receiver's data directory is a 4 MiB tmpfs (needs root and
 * permission to mount; skipped otherwise). The batch that hits the full disk fails whole, the round
 * stops, nothing is half-applied; once space is back (the tmpfs grown, the agent restarted) the
 * next round completes. The mount is always removed.
 */
class FullDiskTest {
  @TempDir Path dir;
  private Path mounted;

  private static int run(String... cmd) throws Exception {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    p.getInputStream().readAllBytes();
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      return -1;
    }
    return p.exitValue();
  }

  @AfterEach
  void unmount() throws Exception {
    if (mounted != null) {
      run("umount", "-l", mounted.toString());
      mounted = null;
    }
  }

  @Test
  void aFullDiskFailsTheBatchWholeAndTheNextRoundCompletes() throws Exception {
    Path data = dir.resolve("b");
    Files.createDirectories(data);
    assumeTrue("root".equals(System.getProperty("user.name")), "needs root to mount a tmpfs");
    assumeTrue(
        run("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", data.toString()) == 0,
        "mount -t tmpfs not permitted");
    mounted = data;
    try (Agents c = new Agents(dir)) {
      ReplicaAgent a = c.start("a", Map.of("batch-records", "200"));
      ReplicaAgent b = c.start("b", Map.of());
      load(a, "k", 12_000, 600); // about 7 MiB of records: cannot fit in 4 MiB
      TreeMap<String, String> truth = contents(a.store());
      RoundReport r = repair(a, b);
      assertThat(r.ok).isFalse();
      assertThat(r.error).as("%s; b: %s", r.error, b.lastReports()).containsIgnoringCase("space");
      // Whatever b stored is exactly a's records, its count agrees with its records, its sketches
      // with both.
      TreeMap<String, String> got = contents(b.store());
      assertThat(got).isNotEmpty();
      got.forEach((k, v) -> assertThat(truth.get(k)).as(k).isEqualTo(v));
      assertThat(b.store().recordCount()).isEqualTo(got.size());
      assertThat(b.store().selfCheck().ok()).isTrue();
      // Space comes back; RocksDB keeps a write error until reopened, so the operator restarts b.
      assertThat(run("mount", "-o", "remount,size=256m", data.toString())).isZero();
      c.stop(b);
      ReplicaAgent b2 = c.start("b", Map.of());
      assertThat(contents(b2.store())).isEqualTo(got);
      RoundReport again = repair(a, b2);
      assertThat(again.ok).as(again.error).isTrue();
      assertConverged(a, b2);
      assertThat(List.of(b2.store().selfCheck().ok())).containsExactly(true);
    }
  }
}
