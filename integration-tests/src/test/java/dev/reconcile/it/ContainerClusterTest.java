package dev.reconcile.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.cli.replay.ProcessCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.testcontainers.junit.jupiter.Testcontainers;

/**
 * Runner (c): scenarios against agents in containers (docker kill, docker pause, restart). Needs a
 * Docker daemon (.ci/run installs and starts one); without one JUnit reports this class as skipped,
 * it never passes without running.
 */
@Testcontainers(disabledWithoutDocker = true)
class ContainerClusterTest {
  static String image;
  @TempDir static Path work;
  @TempDir Path dir;

  @BeforeAll
  static void buildImage() throws Exception {
    Path jar = ProcessCluster.locateJar();
    assertThat(Files.isRegularFile(jar)).as("agent jar %s", jar).isTrue();
    image = AgentImage.build(jar, work);
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"07-receiver-crash", "18-pause"})
  void scenarioPassesInContainers(String prefix) throws Exception {
    Path run = dir.resolve("run");
    Files.createDirectories(run);
    Corpus.runAndCheck(Corpus.file(prefix), new ContainerCluster(image, run), run);
  }
}
