package dev.reconcile.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.cli.bench.AgentBench;
import dev.reconcile.cli.bench.Csv;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Smoke test of {@code reconcile bench} at tiny sizes: files written, numbers sane. */
class BenchCommandTest {
  @TempDir Path dir;

  @Test
  void tinyRunWritesCsvAndPngWithSaneNumbers() throws Exception {
    Path out = dir.resolve("out");
    Cli.Result r =
        Cli.runProduction(
            "bench",
            "--n",
            "2000",
            "--d",
            "1,10",
            "--trials",
            "1",
            "--out",
            out.toString(),
            "--latency-n",
            "1000,2000",
            "--latency-d",
            "10",
            "--rounds",
            "2",
            "--warmup",
            "1",
            "--warmup-settle",
            "2",
            "--stream-records",
            "500",
            "--stream-large-records",
            "8",
            "--stream-large-value-bytes",
            "65536",
            "--stream-trials",
            "1",
            "--stream-writes-per-second",
            "200");
    assertThat(r.status()).as("stderr: %s", r.err()).isZero();
    for (String f :
        List.of(
            "protocol-trials.csv",
            "protocol-summary.csv",
            "latency-rounds.csv",
            "latency-summary.csv",
            "stream-trials.csv",
            "stream-summary.csv",
            "stream-writes.csv")) {
      assertThat(out.resolve(f)).isRegularFile();
    }
    for (String f : List.of("bytes-per-d-n2000.png", "ratio-to-8d.png", "latency-vs-n.png")) {
      byte[] png = Files.readAllBytes(out.resolve(f));
      assertThat(Arrays.copyOf(png, 8))
          .as(f)
          .isEqualTo(new byte[] {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'});
      assertThat(png.length).as(f).isGreaterThan(5_000);
    }
    assertThat(out.resolve("work")).doesNotExist();

    List<Map<String, String>> summary = Csv.read(out.resolve("protocol-summary.csv"));
    assertThat(summary).hasSize(2 * 7);
    for (Map<String, String> row : summary) {
      long d = Long.parseLong(row.get("d"));
      double bytes = Double.parseDouble(row.get("bytes_median"));
      assertThat(row.get("wrong_results")).as("row %s", row).isEqualTo("0");
      // At least the differing elements' 8 bytes, at most both whole lists plus overhead.
      assertThat(bytes)
          .as("row %s", row)
          .isGreaterThanOrEqualTo(8.0 * d)
          .isLessThan(2 * 2000 * 8 + 600_000);
      // meets_target says whether the median met the target (estimator, strata: 6 x 8 B x d +
      // the estimator's size for d >= 10; rateless: 3 x 8 B x d + 1 KiB), recomputed here; the
      // oracle and the baselines have no target.
      String mode = row.get("mode");
      boolean estimatorMode = mode.equals("estimator") || mode.equals("strata");
      if ((estimatorMode && d >= 10) || mode.equals("rateless")) {
        double target =
            estimatorMode
                ? 48.0 * d + Double.parseDouble(row.get("estimator_size"))
                : 24.0 * d + 1024;
        assertThat(Double.parseDouble(row.get("target_bytes"))).as("row %s", row).isEqualTo(target);
        assertThat(row.get("meets_target"))
            .as("row %s", row)
            .isEqualTo(String.valueOf(bytes <= target));
      } else {
        assertThat(row.get("meets_target")).as("row %s", row).isEmpty();
      }
      if (mode.equals("estimator")) {
        assertThat(Long.parseLong(row.get("estimator_size"))).isEqualTo(4059);
      }
      if (row.get("mode").equals("digest-list")) {
        assertThat(bytes).isEqualTo(8.0 * (2000 + 2000 - (d % 2)));
      }
      if (estimatorMode) {
        // Partitions of 125 elements are settled by their digest lists (cheaper than an
        // estimator): far less than both whole lists; three round trips (hello, fingerprints,
        // list).
        assertThat(bytes).as("row %s", row).isLessThan(8.0 * 2000);
        assertThat(Double.parseDouble(row.get("round_trips_median"))).isBetween(2.0, 4.0);
      }
    }
    List<Map<String, String>> latency = Csv.read(out.resolve("latency-summary.csv"));
    assertThat(latency).hasSize(2);
    for (Map<String, String> row : latency) {
      assertThat(Double.parseDouble(row.get("wall_ms_median")))
          .as("row %s", row)
          .isBetween(0.1, 30_000.0);
      assertThat(Long.parseLong(row.get("protocol_bytes"))).as("row %s", row).isPositive();
      // The fixed warm-up round, and more while the JIT was still compiling (at most 3000).
      int warmed = Integer.parseInt(row.get("warmup_rounds"));
      assertThat(warmed).as("row %s", row).isBetween(1 + 2, 1 + AgentBench.MAX_SETTLE_ROUNDS);
      if (Boolean.parseBoolean(row.get("compile_settled"))) {
        assertThat(warmed).as("row %s", row).isLessThan(1 + AgentBench.MAX_SETTLE_ROUNDS);
      }
      assertThat(Long.parseLong(row.get("timed_compile_ms"))).as("row %s", row).isNotNegative();
    }
    List<Map<String, String>> stream = Csv.read(out.resolve("stream-summary.csv"));
    assertThat(stream).hasSize(2);
    // The client's writes: an idle second at 200 puts/s, then the round, for each value size.
    List<Map<String, String>> writes = Csv.read(out.resolve("stream-writes.csv"));
    assertThat(writes).hasSize(4);
    assertThat(writes.stream().map(m -> m.get("phase")))
        .containsExactly("idle", "repair", "idle", "repair");
    for (Map<String, String> row : writes) {
      if (row.get("phase").equals("idle")) {
        assertThat(Integer.parseInt(row.get("writes"))).as("row %s", row).isBetween(150, 250);
      }
      if (Integer.parseInt(row.get("writes")) > 0) {
        double p50 = Double.parseDouble(row.get("p50_us"));
        assertThat(p50).as("row %s", row).isPositive();
        assertThat(Double.parseDouble(row.get("max_us"))).isGreaterThanOrEqualTo(p50);
        // The put's own span is part of the latency from its due time, so never longer.
        double putP50 = Double.parseDouble(row.get("put_p50_us"));
        double putMax = Double.parseDouble(row.get("put_max_us"));
        assertThat(putP50).as("row %s", row).isPositive().isLessThanOrEqualTo(p50);
        assertThat(putMax)
            .as("row %s", row)
            .isGreaterThanOrEqualTo(Double.parseDouble(row.get("put_p99_us")))
            .isLessThanOrEqualTo(Double.parseDouble(row.get("max_us")));
      }
    }
    for (Map<String, String> row : stream) {
      assertThat(Double.parseDouble(row.get("records_per_s_median")))
          .as("row %s", row)
          .isPositive();
      // A client wrote to b during the round: its writes of the trial may be on b alone, every
      // other record on both.
      assertThat(row.get("correct_trials")).as("row %s", row).isEqualTo("1");
    }
    // Each trial's CPU by thread group (Linux, where the suite runs): never the "unknown" -1, and
    // the agents' own threads did work in every round.
    for (Map<String, String> row : Csv.read(out.resolve("stream-trials.csv"))) {
      for (String column : List.of("jit_cpu_ms", "gc_cpu_ms", "rocksdb_cpu_ms", "wait_ms")) {
        assertThat(Long.parseLong(row.get(column))).as("%s of row %s", column, row).isNotNegative();
      }
      long other = Long.parseLong(row.get("other_cpu_ms"));
      assertThat(other).as("row %s", row).isPositive();
      // The round workers sent and applied the records; the parts are within the rest (each
      // rounded down to a millisecond).
      long round = Long.parseLong(row.get("round_cpu_ms"));
      long loops = Long.parseLong(row.get("event_loop_cpu_ms"));
      long upkeep = Long.parseLong(row.get("sketch_upkeep_cpu_ms"));
      assertThat(round).as("row %s", row).isPositive();
      assertThat(loops).as("row %s", row).isNotNegative();
      assertThat(upkeep).as("row %s", row).isNotNegative();
      assertThat(round + loops + upkeep).as("row %s", row).isLessThanOrEqualTo(other);
    }
    assertThat(r.out()).contains("latency ratio n=2000 / n=1000").contains("bench finished");
  }

  @Test
  void applyRunWritesEveryModeOfBothCasesWithEqualContents() throws Exception {
    Path out = dir.resolve("apply-out");
    Cli.Result r =
        Cli.runProduction(
            "bench",
            "--experiments",
            "apply",
            "--apply-trials",
            "1",
            "--catchup-records",
            "500",
            "--catchup-large-records",
            "6",
            "--out",
            out.toString());
    assertThat(r.status()).as(r.err()).isZero();
    List<Map<String, String>> rows = Csv.read(out.resolve("apply-trials.csv"));
    assertThat(rows).hasSize(12);
    for (Map<String, String> row : rows) {
      assertThat(row.get("correct")).as(row.toString()).isEqualTo("true");
      assertThat(Double.parseDouble(row.get("records_per_s"))).isPositive();
    }
    assertThat(rows.stream().map(m -> m.get("mode")).distinct())
        .containsExactlyInAnyOrder(
            "rocksdb-wal",
            "rocksdb-sst",
            "store-no-sketches",
            "store",
            "store-one-batch",
            "store-ingest");
    assertThat(rows.stream().map(m -> m.get("value_bytes")).distinct())
        .containsExactlyInAnyOrder("100", "65536");
    assertThat(Csv.read(out.resolve("apply-summary.csv"))).hasSize(12);
    assertThat(out.resolve("apply-ceiling.png")).isNotEmptyFile();
    assertThat(out.resolve("apply-work")).doesNotExist();
  }

  @Test
  void badArgumentsAreOneLine() {
    Cli.Result r = Cli.runProduction("bench", "--d", "0", "--out", dir.toString());
    assertThat(r.status()).isEqualTo(2);
    assertThat(r.errLines()).singleElement().asString().contains("--d needs positive numbers");
    Cli.Result e = Cli.runProduction("bench", "--experiments", "speed", "--out", dir.toString());
    assertThat(e.status()).isEqualTo(2);
    assertThat(e.errLines()).singleElement().asString().contains("unknown experiment 'speed'");
    Cli.Result k =
        Cli.runProduction(
            "bench",
            "--experiments",
            "stream",
            "--stream-keys",
            "sideways",
            "--out",
            dir.toString());
    assertThat(k.status()).isEqualTo(2);
    assertThat(k.errLines())
        .singleElement()
        .asString()
        .contains("--stream-keys must be clustered or random, not 'sideways'");
  }

  @Test
  void streamWithRandomKeysSendsEveryRecordAndSaysSo() throws Exception {
    Path out = dir.resolve("random-keys");
    Cli.Result r =
        Cli.runProduction(
            "bench",
            "--experiments",
            "stream",
            "--out",
            out.toString(),
            "--stream-records",
            "3000",
            "--stream-large-records",
            "4",
            "--stream-trials",
            "2",
            "--stream-keys",
            "random");
    assertThat(r.status()).as("stderr: %s", r.err()).isZero();
    // The bench fails a trial whose round sent other than the trial's records, so four rows are
    // four rounds that each moved every new record.
    List<Map<String, String>> trials = Csv.read(out.resolve("stream-trials.csv"));
    assertThat(trials).hasSize(4);
    for (Map<String, String> row : trials) {
      assertThat(row.get("keys")).as("row %s", row).isEqualTo("random");
      assertThat(row.get("differing_records")).as("row %s", row).isEqualTo("0");
    }
    assertThat(Csv.read(out.resolve("stream-summary.csv")))
        .extracting(m -> m.get("correct_trials"))
        .containsExactly("2", "2");
    assertThat(trials.stream().map(m -> m.get("records_sent")))
        .containsExactly("3000", "3000", "4", "4");
  }

  @Test
  void randomStreamKeysAreDistinctAndSpreadOverTheKeyOrder() {
    Set<String> seen = new HashSet<>();
    int[] firstDigit = new int[16];
    for (int t = 0; t < 3; t++) {
      for (int i = 0; i < 100_000; i++) {
        String k = new String(AgentBench.randomKey(t, i), StandardCharsets.UTF_8);
        assertThat(k).hasSize(16).matches("[0-9a-f]{16}");
        assertThat(seen.add(k)).as("trial %d, i %d: %s", t, i, k).isTrue();
        firstDigit[Character.digit(k.charAt(0), 16)]++;
      }
    }
    // 300 000 keys over 16 leading digits: 18 750 each if spread; clustered keys would put them
    // all under one or two.
    for (int d = 0; d < 16; d++) {
      assertThat(firstDigit[d]).as("keys starting with %x", d).isBetween(17_500, 20_000);
    }
  }
}
