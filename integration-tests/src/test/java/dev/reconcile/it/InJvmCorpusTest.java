package dev.reconcile.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.cli.replay.InJvmCluster;
import dev.reconcile.cli.replay.ScenarioReport;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Runner (a): every scenario of the corpus against agents in this JVM behind fault-injecting
 * proxies.
 */
class InJvmCorpusTest {
  @TempDir Path dir;

  static List<Path> corpus() throws Exception {
    return Corpus.all();
  }

  @Test
  void corpusCoversTheRequiredCases() throws Exception {
    assertThat(Corpus.all()).hasSizeGreaterThanOrEqualTo(12);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("corpus")
  void scenarioPasses(Path file) throws Exception {
    ScenarioReport r = Corpus.runAndCheck(file, new InJvmCluster(), dir.resolve("run"));
    assertThat(r.checks()).isNotEmpty();
  }
}
