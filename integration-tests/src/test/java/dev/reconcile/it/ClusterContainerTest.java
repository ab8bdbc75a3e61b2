package dev.reconcile.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.cli.replay.ProcessCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.testcontainers.junit.jupiter.Testcontainers;

/**
 * Cluster mode with 5 agents in containers of the locally built {@link AgentImage} (host network,
 * 127.0.0.30-34): join through {@code cluster-seeds} only, converge by background rounds, notice a
 * docker kill, take the restarted container back, heal after a docker pause longer than the failure
 * timeout. Needs a Docker daemon (.ci/run installs and starts one); without one JUnit reports this
 * class as skipped, it never passes without running.
 */
@Testcontainers(disabledWithoutDocker = true)
class ClusterContainerTest {
  static String image;
  @TempDir static Path work;
  @TempDir Path dir;

  @BeforeAll
  static void buildImage() throws Exception {
    Path jar = ProcessCluster.locateJar();
    assertThat(Files.isRegularFile(jar)).as("agent jar %s", jar).isTrue();
    image = AgentImage.build(jar, work);
  }

  @Test
  void fiveContainersJoinConvergeAndSurviveKillRestartAndPause() throws Exception {
    Path run = dir.resolve("run");
    Files.createDirectories(run);
    try (ContainerCluster c = new ContainerCluster(image, run)) {
      ClusterScenario.Times t = new ClusterScenario(c, 5, run).run();
      assertThat(t.frozenOutMillis()).isPositive();
      assertThat(t.healMillis()).isPositive();
    }
  }
}
