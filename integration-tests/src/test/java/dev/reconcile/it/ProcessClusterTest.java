package dev.reconcile.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.agent.AgentTestHooks;
import dev.reconcile.cli.replay.ProcessCluster;
import dev.reconcile.cli.replay.ScenarioReport;
import dev.reconcile.cli.replay.ScenarioRunner;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
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
        "19-five-replicas-deletes", // five processes, deletes and later rewrites of deleted keys
        "22-receiver-crash-after-large" // kill -9 after a round whose batches skipped the WAL
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

  /**
   * The agents load RocksDB's JNI library from the one copy the cluster makes (the agent process
   * maps that file), not from a copy of their own in java.io.tmpdir, which a kill -9 leaves behind;
   * the cluster's copy goes at close.
   */
  @Test
  void agentsMapTheClustersOneCopyOfRocksDbsLibrary() throws Exception {
    Path jar = ProcessCluster.locateJar();
    assertThat(Files.isRegularFile(jar)).as("agent jar %s", jar).isTrue();
    Path lib;
    ProcessCluster c = new ProcessCluster(jar, dir.resolve("logs"));
    try {
      Map<String, String> config = new HashMap<>(ScenarioRunner.BASE);
      config.put("node-id", "a");
      config.put("data", dir.resolve("a").toString());
      c.start("a", 0, config, AgentTestHooks.NONE);
      String option = c.libraryOption().orElseThrow();
      assertThat(option).startsWith("-Djava.library.path=");
      lib = Path.of(option.substring(option.indexOf('=') + 1)).resolve("librocksdbjni-linux64.so");
      assertThat(lib).isRegularFile();
      ProcessHandle agent =
          ProcessHandle.current()
              .children()
              .filter(h -> h.info().arguments().map(a -> List.of(a).contains(option)).orElse(false))
              .findFirst()
              .orElseThrow(() -> new AssertionError("no agent process started with " + option));
      // Its store is open (it listens): the JVM has mapped the library, and from this copy.
      assertThat(Files.readString(Path.of("/proc", Long.toString(agent.pid()), "maps")))
          .contains(lib.toString())
          .doesNotContain(System.getProperty("java.io.tmpdir") + "/librocksdbjni");
      c.crash("a");
    } finally {
      c.close();
    }
    assertThat(lib).doesNotExist();
    assertThat(lib.getParent()).doesNotExist();
  }
}
