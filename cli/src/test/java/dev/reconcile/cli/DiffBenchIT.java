package dev.reconcile.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.cli.bench.Csv;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code reconcile bench --experiments diff} with the shaded jar, after {@code package}. */
class DiffBenchIT {
  @TempDir Path dir;

  /**
   * The diff experiment at a tiny size: real processes of the shaded jar (built by package, before
   * integration-test: this runs under Failsafe) against sort + comm, every reconcile run checked
   * line by line against comm's answer.
   */
  @Test
  void diffExperimentRunsTheJarAgainstSortAndComm() throws Exception {
    Path jar = Path.of("target", "reconcile.jar").toAbsolutePath();
    assertThat(jar).as("the shaded jar (made by package, before integration-test)").isRegularFile();
    Path out = dir.resolve("diff");
    Cli.Result r =
        Cli.runProduction(
            "bench",
            "--experiments",
            "diff",
            "--diff-lines",
            "3000",
            "--diff-pypi-lines",
            "2000",
            "--diff-trials",
            "2",
            "--diff-fraction",
            "0.05",
            "--out",
            out.toString());
    assertThat(r.status()).as("stderr: %s", r.err()).isZero();
    List<Map<String, String>> summary = Csv.read(out.resolve("diff-summary.csv"));
    boolean launcher = Files.isExecutable(Path.of("..", "bin", "reconcile"));
    assertThat(summary).hasSize(2 * (launcher ? 4 : 2));
    for (Map<String, String> row : summary) {
      assertThat(row.get("correct_runs")).as("row %s", row).isEqualTo("2");
      assertThat(Double.parseDouble(row.get("wall_ms_median"))).as("row %s", row).isPositive();
      assertThat(Long.parseLong(row.get("differences"))).as("row %s", row).isBetween(50L, 250L);
    }
    assertThat(summary.stream().map(m -> m.get("command"))).contains("sort+comm", "java -jar");
    List<Map<String, String>> trials = Csv.read(out.resolve("diff-trials.csv"));
    assertThat(trials).hasSize(2 * 2 * (launcher ? 4 : 2));
    assertThat(trials.stream().filter(m -> !m.get("command").equals("sort+comm")))
        .allSatisfy(m -> assertThat(m.get("exit_status")).isEqualTo("1"));
    byte[] png = Files.readAllBytes(out.resolve("diff-vs-sort.png"));
    assertThat(Arrays.copyOf(png, 4)).isEqualTo(new byte[] {(byte) 0x89, 'P', 'N', 'G'});
    assertThat(out.resolve("work")).doesNotExist();
  }
}
