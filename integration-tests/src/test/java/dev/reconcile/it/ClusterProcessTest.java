package dev.reconcile.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.cli.replay.ProcessCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Cluster mode with 5 agent processes ({@code java -jar reconcile.jar agent}) on 127.0.0.10-14:
 * join through {@code cluster-seeds} only, converge by background rounds, notice a kill -9, take
 * the restarted member back, heal after a SIGSTOP longer than the failure timeout. The phase times
 * are printed ({@code cluster-timing ...}) and kept in the run directory.
 */
class ClusterProcessTest {
  @TempDir Path dir;

  @Test
  void fiveProcessesJoinConvergeAndSurviveKillRestartAndFreeze() throws Exception {
    Path jar = ProcessCluster.locateJar();
    assertThat(Files.isRegularFile(jar))
        .as("agent jar %s (package the cli module first)", jar)
        .isTrue();
    Path run = dir.resolve("run");
    Files.createDirectories(run);
    try (ProcessCluster c = new ProcessCluster(jar, run.resolve("logs"))) {
      ClusterScenario.Times t = new ClusterScenario(c, 5, run).run();
      assertThat(t.frozenOutMillis()).isPositive();
      assertThat(t.healMillis()).isPositive();
    }
  }
}
