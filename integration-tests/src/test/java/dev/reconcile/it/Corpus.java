package dev.reconcile.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.cli.replay.Cluster;
import dev.reconcile.cli.replay.Scenario;
import dev.reconcile.cli.replay.ScenarioParser;
import dev.reconcile.cli.replay.ScenarioReport;
import dev.reconcile.cli.replay.ScenarioRunner;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * The scenario corpus (integration-tests/scenarios) and a helper that runs one scenario and asserts
 * it passed.
 */
final class Corpus {
  private Corpus() {}

  static Path dir() {
    return Path.of(System.getProperty("reconcile.scenarios", "scenarios"));
  }

  static Path file(String prefix) throws IOException {
    try (Stream<Path> s = Files.list(dir())) {
      return s.filter(p -> p.getFileName().toString().startsWith(prefix))
          .findFirst()
          .orElseThrow(() -> new IllegalArgumentException("no scenario " + prefix));
    }
  }

  static List<Path> all() throws IOException {
    try (Stream<Path> s = Files.list(dir())) {
      return s.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
    }
  }

  static int scale() {
    return Integer.getInteger("reconcile.trials.scale", 1);
  }

  /**
   * Runs {@code file} on {@code cluster} in {@code runDir}, prints the report, and asserts every
   * expectation held.
   */
  static ScenarioReport runAndCheck(Path file, Cluster cluster, Path runDir) throws Exception {
    Scenario s = ScenarioParser.parse(file);
    PrintWriter log = new PrintWriter(System.out, true, StandardCharsets.UTF_8);
    ScenarioReport r = new ScenarioRunner(s, cluster, runDir, log).run();
    System.out.print(r.text());
    assertThat(r.passed())
        .as("scenario %s on %s:%n%s", file.getFileName(), cluster.mode(), r.text())
        .isTrue();
    return r;
  }
}
