package dev.reconcile.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.cli.ReconcileCommand;
import dev.reconcile.cli.bench.Csv;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code reconcile bench --experiments catchup} end to end, small: a source agent process and a
 * new, empty one (the shaded jar the cli module packaged), one timed round per case, and the
 * bench's own check that the new replica then holds exactly the source's records.
 */
class CatchupBenchTest {
  @TempDir Path dir;

  @Test
  void aCatchUpOfAgentProcessesIsTimedAndComparedRecordByRecord() throws Exception {
    Path out = dir.resolve("out");
    String log =
        bench(
            out,
            "--catchup-trials",
            "1",
            "--catchup-records",
            "3000",
            "--catchup-large-records",
            "24");
    // The agents load RocksDB's library from one copy in the work folder, as bin/reconcile's do
    // from one beside the jar, not each from its own copy in /tmp.
    assertThat(log)
        .contains(
            "-Djava.library.path="
                + out.resolve("work").resolve("catchup-100").resolve("native").toAbsolutePath());
    // Both sizes' agents map one class archive, made once (a training demo of about 5 s): the
    // library folder, one per size, does not make another.
    assertThat(log).containsOnlyOnce("agent class archive made by a training demo");
    assertThat(log.lines().filter(l -> l.contains("agent JVM options")))
        .hasSize(2)
        .allSatisfy(l -> assertThat(l).contains("-XX:SharedArchiveFile="));

    List<Map<String, String>> trials = Csv.read(out.resolve("catchup-trials.csv"));
    assertThat(trials).hasSize(2);
    for (Map<String, String> t : trials) {
      assertThat(t.get("correct")).as(t.toString()).isEqualTo("true");
      assertThat(t.get("records_received")).as(t.toString()).isEqualTo(t.get("records"));
      assertThat(Double.parseDouble(t.get("wall_ms"))).as(t.toString()).isPositive();
      // Both processes worked during the round: the new one applied, the source read and sent.
      assertThat(Double.parseDouble(t.get("new_cpu_s"))).as(t.toString()).isPositive();
      assertThat(Double.parseDouble(t.get("source_cpu_s"))).as(t.toString()).isPositive();
      // The split by thread group (Linux): a just-started agent compiles the round's code, and
      // the groups of live threads add up to no more than the process's own CPU time (which is
      // counted in 10 ms ticks, hence the margin).
      double jit = Double.parseDouble(t.get("new_jit_cpu_s"));
      assertThat(jit).as(t.toString()).isPositive();
      double groups =
          jit
              + Double.parseDouble(t.get("new_gc_cpu_s"))
              + Double.parseDouble(t.get("new_rocksdb_cpu_s"))
              + Double.parseDouble(t.get("new_other_cpu_s"));
      assertThat(groups)
          .as(t.toString())
          .isLessThanOrEqualTo(Double.parseDouble(t.get("new_cpu_s")) + 0.05);
      assertThat(Double.parseDouble(t.get("new_wait_s"))).as(t.toString()).isNotNegative();
      assertThat(Double.parseDouble(t.get("calibration_core_ms"))).as(t.toString()).isPositive();
    }
    assertThat(trials.stream().map(t -> t.get("value_bytes")).collect(Collectors.toList()))
        .containsExactly("100", "65536");
    List<Map<String, String>> summary = Csv.read(out.resolve("catchup-summary.csv"));
    assertThat(summary)
        .hasSize(2)
        .allSatisfy(
            s -> {
              assertThat(s.get("correct_trials")).isEqualTo("1");
              assertThat(s.get("source")).isEqualTo("cold");
            });
    assertThat(out.resolve("catchup-vs-target.png")).isNotEmptyFile();
  }

  /**
   * A warm source: one source process, warmed by an untimed catch-up, serves two trials, each with
   * a just-started new replica; both are compared record by record with the source while its agent
   * still runs (a read-only open of its store).
   */
  @Test
  void aWarmSourceServesEveryTrialAndEachNewReplicaIsCompared() throws Exception {
    Path out = dir.resolve("out-warm");
    String err =
        bench(
            out,
            "--catchup-trials",
            "2",
            "--catchup-records",
            "3000",
            "--catchup-large-records",
            "0",
            "--catchup-class-archive",
            "false",
            "--catchup-warm-source",
            "true");
    assertThat(err).contains("served an untimed catch-up");
    List<Map<String, String>> trials = Csv.read(out.resolve("catchup-trials.csv"));
    assertThat(trials).hasSize(2);
    for (Map<String, String> t : trials) {
      assertThat(t.get("correct")).as(t.toString()).isEqualTo("true");
      assertThat(t.get("records_received")).as(t.toString()).isEqualTo("3000");
      assertThat(Double.parseDouble(t.get("source_cpu_s"))).as(t.toString()).isPositive();
    }
    assertThat(Csv.read(out.resolve("catchup-summary.csv")))
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.get("source")).isEqualTo("warm");
              assertThat(s.get("correct_trials")).isEqualTo("2");
            });
  }

  /** Runs {@code reconcile bench --experiments catchup ARGS --out OUT}; returns what it logged. */
  private static String bench(Path out, String... args) {
    List<String> all = new ArrayList<>(List.of("bench", "--experiments", "catchup"));
    all.addAll(List.of(args));
    all.addAll(List.of("--out", out.toString()));
    StringWriter err = new StringWriter();
    CommandLine cl = ReconcileCommand.commandLine(new ReconcileCommand());
    cl.setOut(new PrintWriter(new StringWriter(), true));
    cl.setErr(new PrintWriter(err, true));
    int status = cl.execute(all.toArray(new String[0]));
    assertThat(status).as(err.toString()).isZero();
    return err.toString();
  }
}
