package dev.reconcile.it;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.reconcile.cli.replay.InJvmCluster;
import dev.reconcile.cli.replay.ProcessCluster;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Soak: the whole corpus {@code scale} times in one JVM and as processes (timing-dependent faults
 * land at different points each time). Only under {@code -Psoak} ({@code reconcile.trials.scale}
 * 10); skipped in the default suite.
 */
class ReplaySoakTest {
  @TempDir Path dir;

  @Test
  void corpusRepeatedlyInJvmAndAsProcesses() throws Exception {
    int scale = Corpus.scale();
    assumeTrue(scale > 1, "soak runs only with -Psoak");
    int run = 0;
    for (int i = 0; i < scale; i++) {
      for (Path f : Corpus.all()) {
        Path d = dir.resolve("r" + run++);
        Corpus.runAndCheck(f, new InJvmCluster(), d);
        if (i == 0) {
          Path p = dir.resolve("r" + run++);
          Corpus.runAndCheck(
              f, new ProcessCluster(ProcessCluster.locateJar(), p.resolve("logs")), p);
        }
      }
    }
  }
}
