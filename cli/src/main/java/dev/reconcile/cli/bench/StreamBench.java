package dev.reconcile.cli.bench;

import dev.reconcile.agent.HostPort;
import dev.reconcile.agent.LocalReplica;
import dev.reconcile.agent.ReplicaAgent;
import dev.reconcile.agent.RoundReport;
import dev.reconcile.core.ReplicaRecord;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The repair stream alone: two real agents ({@link ReplicaAgent}) on loopback in this JVM, as
 * {@link AgentBench}'s. Before each trial the initiator gets {@code records} new records the
 * responder lacks; a real round sends them; the rate is over the repair phase ({@code
 * durationMillis - sessionMillis}: fetch from RocksDB, batches with CRC32C, TCP, apply, acks).
 * After each trial, untimed, the two replicas are compared record by record ({@link
 * #differingRecords}).
 */
public final class StreamBench {
  private StreamBench() {}

  /** One stream configuration. */
  public record StreamRate(
      int records,
      int valueBytes,
      int trials,
      double recordsPerSecondMedian,
      double megabytesPerSecondMedian,
      int correctTrials) {}

  /** Streams {@code records} records of {@code valueBytes} each way a->b, {@code trials} times. */
  public static StreamRate stream(
      int records, int valueBytes, int trials, Path work, Csv csv, Consumer<String> log)
      throws Exception {
    return stream(records, valueBytes, trials, work, csv, 0, null, false, Map.of(), log);
  }

  /**
   * {@link #stream}, and with {@code writesPerSecond > 0} a client writing new keys of 100 B to the
   * receiver b at that rate ({@link ForegroundWrites}) through an idle second before each round and
   * through the round; the latencies of the writes due in the idle second and in the repair phase
   * go to {@code writesCsv}. The keys so written are of partition 0 and b's alone, so the next
   * trial's round also sends them to a; trial 0's other partitions stay a catch-up's (bulk). With
   * {@code randomKeys} a trial's new keys are {@link AgentBench#randomKey}s, spread over each
   * partition's key order, instead of {@code s<trial>-<i>}, which fall together. {@code sets} are
   * agent settings for both agents.
   */
  public static StreamRate stream(
      int records,
      int valueBytes,
      int trials,
      Path work,
      Csv csv,
      int writesPerSecond,
      Csv writesCsv,
      boolean randomKeys,
      Map<String, String> sets,
      Consumer<String> log)
      throws Exception {
    Path dir = work.resolve("stream-" + valueBytes);
    try (ReplicaAgent a = AgentBench.start("a", dir, sets);
        ReplicaAgent b = AgentBench.start("b", dir, sets)) {
      HostPort peer = new HostPort("127.0.0.1", b.peerPort());
      SplittableRandom rnd = new SplittableRandom(valueBytes * 31L + records);
      LocalReplica ra = LocalReplica.of(a);
      long origin = LocalReplica.origin("loader");
      double[] rps = new double[trials];
      double[] mbps = new double[trials];
      int correct = 0;
      LocalReplica rb = LocalReplica.of(b);
      for (int t = 0; t < trials; t++) {
        long version = ra.newVersion();
        List<ReplicaRecord> batch = new ArrayList<>();
        long batchBytes = 0;
        for (int i = 0; i < records; i++) {
          batch.add(
              new ReplicaRecord(
                  randomKeys ? AgentBench.randomKey(t, i) : AgentBench.key("s" + t + "-", i),
                  AgentBench.value(rnd, valueBytes),
                  version,
                  origin,
                  false));
          batchBytes += valueBytes;
          if (batch.size() == 10_000 || batchBytes >= (64L << 20)) {
            ra.putAll(batch);
            batch.clear();
            batchBytes = 0;
          }
        }
        ra.putAll(batch);
        AgentBench.awaitIdle(a, b);
        ForegroundWrites writes =
            writesPerSecond > 0
                ? new ForegroundWrites(
                    LocalReplica.of(b),
                    writesPerSecond,
                    "w" + t + "-",
                    100,
                    Math.min(1 << 22, writesPerSecond * 600),
                    t)
                : null;
        long idleFrom = System.nanoTime();
        if (writes != null) {
          Thread.sleep(1000);
        }
        long roundFrom = System.nanoTime();
        long pid = ProcessHandle.current().pid();
        Optional<ThreadCpu.Sample> cpuFrom = ThreadCpu.of(pid);
        RoundReport rep;
        try {
          rep = AgentBench.round(a, peer, false);
        } finally {
          if (writes != null) {
            writes.stop();
          }
        }
        long roundTo = System.nanoTime();
        // CPU by thread group over the round: both agents, this JVM's compilers, GC and RocksDB.
        ThreadCpu.Totals cpu = ThreadCpu.since(cpuFrom, pid);
        if (rep.recordsSent != records) {
          throw new IllegalStateException(
              "stream round sent " + rep.recordsSent + " records, expected " + records);
        }
        long millis = Math.max(1, rep.durationMillis - rep.sessionMillis);
        if (writes != null) {
          // The repair phase is the round's last (duration - session) ms.
          long repairFrom = roundTo - Math.min(roundTo - roundFrom, millis * 1_000_000L);
          writeLatencies(
              writes, "idle", idleFrom, roundFrom, records, valueBytes, t, writesCsv, log);
          writeLatencies(
              writes, "repair", repairFrom, roundTo, records, valueBytes, t, writesCsv, log);
        }
        rps[t] = rep.recordsSent * 1000.0 / millis;
        mbps[t] = rep.recordBytesSent / 1e6 * 1000.0 / millis;
        // Untimed: the round must have left b holding every record of a's, and a every record of
        // b's but this trial's client writes (those during the round may come after its snapshot).
        byte[] clientPrefix = ("w" + t + "-").getBytes(StandardCharsets.UTF_8);
        long differing = differingRecords(ra, rb, k -> startsWith(k, clientPrefix));
        if (differing == 0) {
          correct++;
        } else {
          log.accept(
              String.format(
                  "stream %,d x %,d B, trial %d: %,d records differ between the replicas after"
                      + " the round",
                  records, valueBytes, t, differing));
        }
        csv.row(
            records,
            valueBytes,
            t,
            rep.recordsSent,
            rep.recordBytesSent,
            rep.sessionMillis,
            millis,
            rps[t],
            mbps[t],
            cpu == null ? -1 : Math.round(cpu.jitSeconds() * 1000),
            cpu == null ? -1 : Math.round(cpu.gcSeconds() * 1000),
            cpu == null ? -1 : Math.round(cpu.rocksDbSeconds() * 1000),
            cpu == null ? -1 : Math.round(cpu.otherSeconds() * 1000),
            cpu == null ? -1 : Math.round(cpu.waitSeconds() * 1000),
            randomKeys ? "random" : "clustered",
            differing,
            cpu == null ? -1 : cpu.roundMillis(),
            cpu == null ? -1 : cpu.eventLoopMillis(),
            cpu == null ? -1 : cpu.upkeepMillis());
        log.accept(
            String.format(
                "stream %,d x %,d B, trial %d: session %d ms, repair %d ms: %,.0f records/s, %.1f"
                    + " MB/s; %s",
                records,
                valueBytes,
                t,
                rep.sessionMillis,
                millis,
                rps[t],
                mbps[t],
                cpu == null
                    ? "no CPU by thread (not Linux)"
                    : String.format(
                        "CPU over the round: JIT %.2f s, GC %.2f s, RocksDB's threads %.2f s, the"
                            + " rest %.2f s (round workers %.2f s, event loops %.2f s, sketch"
                            + " upkeep %.2f s), runnable but waiting %.2f s",
                        cpu.jitSeconds(),
                        cpu.gcSeconds(),
                        cpu.rocksDbSeconds(),
                        cpu.otherSeconds(),
                        cpu.roundMillis() / 1e3,
                        cpu.eventLoopMillis() / 1e3,
                        cpu.upkeepMillis() / 1e3,
                        cpu.waitSeconds())));
      }
      return new StreamRate(
          records, valueBytes, trials, Medians.of(rps), Medians.of(mbps), correct);
    } finally {
      AgentBench.wipe(dir);
    }
  }

  private static void writeLatencies(
      ForegroundWrites writes,
      String phase,
      long from,
      long to,
      int records,
      int valueBytes,
      int trial,
      Csv csv,
      Consumer<String> log) {
    double[] us = writes.latencyMicros(from, to);
    double p50 = Medians.quantile(us, 0.5);
    double p99 = Medians.quantile(us, 0.99);
    double p999 = Medians.quantile(us, 0.999);
    double max = Medians.max(us);
    double[] inPut = writes.serviceMicros(from, to);
    double putP50 = Medians.quantile(inPut, 0.5);
    double putP99 = Medians.quantile(inPut, 0.99);
    double putMax = Medians.max(inPut);
    csv.row(
        records, valueBytes, trial, phase, us.length, p50, p99, p999, max, putP50, putP99, putMax);
    log.accept(
        String.format(
            "stream %,d x %,d B, trial %d, %s: %d local writes, latency p50 %.0f us, p99 %.0f us,"
                + " p99.9 %.0f us, max %.0f us; in the put itself p50 %.0f us, p99 %.0f us,"
                + " max %.0f us",
            records,
            valueBytes,
            trial,
            phase,
            us.length,
            p50,
            p99,
            p999,
            max,
            putP50,
            putP99,
            putMax));
  }

  static Csv streamWritesCsv(Path out) {
    return new Csv(
        out.resolve("stream-writes.csv"),
        "records",
        "value_bytes",
        "trial",
        "phase",
        "writes",
        "p50_us",
        "p99_us",
        "p999_us",
        "max_us",
        "put_p50_us",
        "put_p99_us",
        "put_max_us");
  }

  static Csv streamCsv(Path out) {
    return new Csv(
        out.resolve("stream-trials.csv"),
        "records",
        "value_bytes",
        "trial",
        "records_sent",
        "record_bytes_sent",
        "session_ms",
        "repair_ms",
        "records_per_s",
        "mb_per_s",
        "jit_cpu_ms",
        "gc_cpu_ms",
        "rocksdb_cpu_ms",
        "other_cpu_ms",
        "wait_ms",
        "keys",
        "differing_records",
        "round_cpu_ms",
        "event_loop_cpu_ms",
        "sketch_upkeep_cpu_ms");
  }

  /**
   * Records that tell {@code a} and {@code b} apart, compared record by record (key, value,
   * version, origin, tombstone): each of {@code a}'s that {@code b} lacks or holds otherwise, and
   * each of {@code b}'s that {@code a} lacks unless {@code bOnly} accepts its key. 0 when the two
   * hold the same records but those.
   */
  static long differingRecords(LocalReplica a, LocalReplica b, Predicate<byte[]> bOnly) {
    LongAdder differing = new LongAdder();
    a.forEachRecord(
        r -> {
          Optional<ReplicaRecord> o = b.get(r.key());
          if (o.isEmpty() || !sameRecord(r, o.get())) {
            differing.increment();
          }
        });
    b.forEachRecord(
        r -> {
          if (!bOnly.test(r.key()) && a.get(r.key()).isEmpty()) {
            differing.increment();
          }
        });
    return differing.sum();
  }

  private static boolean sameRecord(ReplicaRecord x, ReplicaRecord y) {
    return Arrays.equals(x.key(), y.key())
        && Arrays.equals(x.value(), y.value())
        && x.version() == y.version()
        && x.origin() == y.origin()
        && x.tombstone() == y.tombstone();
  }

  private static boolean startsWith(byte[] key, byte[] prefix) {
    return key.length >= prefix.length
        && Arrays.equals(key, 0, prefix.length, prefix, 0, prefix.length);
  }
}
