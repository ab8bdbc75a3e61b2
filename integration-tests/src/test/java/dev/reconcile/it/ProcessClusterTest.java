package dev.reconcile.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.cli.replay.ProcessCluster;
import dev.reconcile.cli.replay.ScenarioReport;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Runner (b): agents as OS processes ({@code java -jar cli/target/reconcile.jar agent}) on
 * 127.0.0.x, driven over HTTP, with real kill -9, SIGSTOP and restarts; deletes (which read as
 * absent over HTTP) and clock skew (a test hook passed as process arguments). The whole corpus runs
 * as processes in {@link ReplaySoakTest} under -Psoak. The jar is packaged by the cli module before
 * this one in the reactor; a missing jar fails the test (it is never skipped).
 */
class ProcessClusterTest {
  @TempDir Path dir;

  @ParameterizedTest(name = "{0}")
  @ValueSource(
      strings = {
        "05-deletes", // tombstones read as absent over HTTP: the loss check must allow for them
        "06-sender-crash",
        "07-receiver-crash",
        "08-partition",
        "15-clock-skew", // test hooks reach a process as arguments of HookedAgentMain
        "18-pause",
        "19-five-replicas-deletes" // five processes, deletes and later rewrites of deleted keys
      })
  void scenarioPassesWithProcesses(String prefix) throws Exception {
    Path jar = ProcessCluster.locateJar();
    assertThat(Files.isRegularFile(jar))
        .as("agent jar %s (package the cli module first)", jar)
        .isTrue();
    Path run = dir.resolve("run");
    ScenarioReport r =
        Corpus.runAndCheck(Corpus.file(prefix), new ProcessCluster(jar, run.resolve("logs")), run);
    assertThat(r.mode()).isEqualTo("process");
  }
}
