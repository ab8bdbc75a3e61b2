package dev.reconcile.cli.bench;

import dev.reconcile.agent.AgentConfig;
import dev.reconcile.agent.HostPort;
import dev.reconcile.agent.LocalReplica;
import dev.reconcile.agent.ReplicaAgent;
import dev.reconcile.agent.RoundReport;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.PartitionOutcome;
import dev.reconcile.core.ReplicaRecord;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * Two real agents ({@link ReplicaAgent}: RocksDB, Vert.x, the peer protocol over TCP) on loopback
 * in this JVM, with agent default sketch parameters (16 partitions, tables up to 2^15 cells).
 *
 * <ul>
 *   <li><b>latency</b>: both agents bulk-loaded ({@link LocalReplica#putAll}) with {@code n}
 *       records differing in {@code d}; warm-up rounds (a fixed number, then more until the JIT is
 *       quiet: {@link CompileSettle}), then timed dry-run rounds (the session runs in full, nothing
 *       is streamed, so the data stays divergent). Wall time is {@code System.nanoTime} around
 *       {@code repair(peer, dryRun=true)}; the agent's own {@code sessionMillis} is kept too. After
 *       each timed round, untimed, the elements it listed are compared with the truth ({@link
 *       #checkListed}): the records they name on the side that holds them must be exactly the keys
 *       loaded on that side only.
 *   <li><b>stream</b>: before each trial the initiator gets {@code records} new records the
 *       responder lacks; a real round sends them; the rate is over the repair phase ({@code
 *       durationMillis - sessionMillis}: fetch from RocksDB, batches with CRC32C, TCP, apply,
 *       acks).
 * </ul>
 */
public final class AgentBench {
  private AgentBench() {}

  /** One latency grid point. */
  public record Latency(
      long n,
      long d,
      int rounds,
      double wallMillisMedian,
      double sessionMillisMedian,
      double loadSeconds,
      double settleSeconds,
      long protocolBytes,
      int roundTrips,
      int warmupRounds,
      boolean compileSettled,
      long timedCompileMillis) {}

  /** One stream configuration. */
  public record StreamRate(
      int records,
      int valueBytes,
      int trials,
      double recordsPerSecondMedian,
      double megabytesPerSecondMedian,
      int correctTrials) {}

  // ------------------------------------------------------------------------------ latency

  /**
   * Most warm-up rounds past the fixed ones while waiting for the JIT ({@link CompileSettle}):
   * about 30 s of rounds at n = 10^6.
   */
  public static final int MAX_SETTLE_ROUNDS = 3000;

  public static List<Latency> latency(
      long[] ns,
      long d,
      Map<String, String> sets,
      int warmup,
      int settleWindow,
      int rounds,
      Path work,
      Path out,
      Consumer<String> log)
      throws Exception {
    List<Latency> result = new ArrayList<>();
    try (Csv csv =
            new Csv(
                out.resolve("latency-rounds.csv"),
                "n",
                "d",
                "round",
                "wall_ms",
                "session_ms",
                "session_us",
                "report_us",
                "protocol_bytes",
                "round_trips",
                "difference",
                "checked_by_fingerprint",
                "looked_up_partitions",
                "compile_ms");
        Csv sum =
            new Csv(
                out.resolve("latency-summary.csv"),
                "n",
                "d",
                "rounds",
                "wall_ms_median",
                "session_ms_median",
                "load_s",
                "settle_s",
                "protocol_bytes",
                "round_trips",
                "warmup_rounds",
                "compile_settled",
                "timed_compile_ms")) {
      for (long n : ns) {
        if (d > n) {
          log.accept(String.format("latency: skipping n=%d (d=%d > n)", n, d));
          continue;
        }
        Path dir = work.resolve("latency-" + n);
        try (ReplicaAgent a = start("a", dir, sets);
            ReplicaAgent b = start("b", dir, sets)) {
          long t0 = System.nanoTime();
          load(LocalReplica.of(a), LocalReplica.of(b), n, d, 100);
          double loadSeconds = (System.nanoTime() - t0) / 1e9;
          log.accept(String.format("latency n=%,d: loaded both agents in %.1f s", n, loadSeconds));
          double settleSeconds = settle(a, b);
          log.accept(
              String.format(
                  "latency n=%,d: compactions after the load ended in %.1f s", n, settleSeconds));
          HostPort peer = new HostPort("127.0.0.1", b.peerPort());
          for (int w = 0; w < warmup; w++) {
            warmupRound(a, b, peer, d);
          }
          CompileSettle jit = CompileSettle.ofThisJvm(Math.max(1, settleWindow));
          int warmed = warmup;
          boolean settled = false; // the JIT seen quiet (false when not waited for)
          if (settleWindow > 0 && jit.available()) {
            jit.start();
            for (int w = 0; w < MAX_SETTLE_ROUNDS && !settled; w++) {
              warmupRound(a, b, peer, d);
              warmed++;
              settled = jit.roundEnded();
            }
          }
          log.accept(
              String.format(
                  "latency n=%,d: %d warm-up rounds, the JIT %s",
                  n,
                  warmed,
                  settleWindow == 0
                      ? "not waited for"
                      : settled
                          ? "quiet for the last " + settleWindow
                          : "still compiling (or its time unknown) after the most rounds"));
          long timedCompile = 0;
          double[] wall = new double[rounds];
          double[] session = new double[rounds];
          long bytes = 0;
          int rts = 0;
          for (int r = 0; r < rounds; r++) {
            awaitIdle(a, b);
            long c0 = jit.compileMillis();
            long s = System.nanoTime();
            RoundReport rep = round(a, peer, true);
            wall[r] = (System.nanoTime() - s) / 1e6;
            long compiled = c0 < 0 ? -1 : jit.compileMillis() - c0;
            timedCompile += Math.max(0, compiled);
            session[r] = rep.sessionMicros / 1_000.0; // ms, not truncated to whole ones
            bytes = rep.stats.protocolBytes(); // a dry round: no record batches
            rts = rep.stats.roundTrips();
            long diff = rep.missingLocal + rep.missingRemote;
            if (diff != d) {
              throw new IllegalStateException(
                  "latency round found a difference of " + diff + ", expected " + d);
            }
            checkListed(a, b, rep, d);
            int checked = rep.stats.checkedByFingerprint();
            // Partitions decoded (rateless or from tables) whose elements were looked up.
            int lookedUp = rep.ratelessPartitions + rep.ibltPartitions - checked;
            csv.row(
                n,
                d,
                r,
                wall[r],
                rep.sessionMillis,
                rep.sessionMicros,
                rep.durationMicros,
                bytes,
                rts,
                diff,
                checked,
                lookedUp,
                compiled);
          }
          Latency l =
              new Latency(
                  n,
                  d,
                  rounds,
                  Medians.of(wall),
                  Medians.of(session),
                  loadSeconds,
                  settleSeconds,
                  bytes,
                  rts,
                  warmed,
                  settled,
                  jit.available() ? timedCompile : -1);
          sum.row(
              n,
              d,
              rounds,
              l.wallMillisMedian(),
              l.sessionMillisMedian(),
              loadSeconds,
              settleSeconds,
              bytes,
              rts,
              l.warmupRounds(),
              l.compileSettled(),
              l.timedCompileMillis());
          log.accept(
              String.format(
                  "latency n=%,d d=%,d: median %.1f ms wall, %.2f ms session (%d rounds), %,d"
                      + " protocol bytes; %d rounds retried so far; the JIT compiled for %d ms"
                      + " during the timed rounds",
                  n,
                  d,
                  l.wallMillisMedian(),
                  l.sessionMillisMedian(),
                  rounds,
                  bytes,
                  retries,
                  l.timedCompileMillis()));
          result.add(l);
        } finally {
          wipe(dir);
        }
      }
    }
    return result;
  }

  /**
   * A warm-up round does what a timed one does, the untimed check of its lists included, so that
   * the JIT compiles that check before the timed rounds and not during them.
   */
  private static void warmupRound(ReplicaAgent a, ReplicaAgent b, HostPort peer, long d)
      throws Exception {
    awaitIdle(a, b);
    checkListed(a, b, round(a, peer, true), d);
  }

  /** Loads {@code n} records on a (and {@code n - ceil(d/2) + floor(d/2)} on b) differing in d. */
  static void load(LocalReplica a, LocalReplica b, long n, long d, int valueBytes) {
    SplittableRandom rnd = new SplittableRandom(n * 7919 + d);
    long onlyA = (d + 1) / 2;
    long onlyB = d / 2;
    long common = n - onlyA;
    long origin = LocalReplica.origin("loader");
    long version = a.newVersion();
    List<ReplicaRecord> batch = new ArrayList<>(10_000);
    for (long i = 0; i < common; i++) {
      batch.add(new ReplicaRecord(key("k", i), value(rnd, valueBytes), version, origin, false));
      if (batch.size() == 10_000) {
        a.putAll(batch);
        b.putAll(batch);
        batch.clear();
      }
    }
    a.putAll(batch);
    b.putAll(batch);
    batch.clear();
    for (long i = 0; i < onlyA; i++) {
      batch.add(new ReplicaRecord(key("a", i), value(rnd, valueBytes), version, origin, false));
    }
    a.putAll(batch);
    batch.clear();
    for (long i = 0; i < onlyB; i++) {
      batch.add(new ReplicaRecord(key("b", i), value(rnd, valueBytes), version, origin, false));
    }
    b.putAll(batch);
  }

  /**
   * The truth, element by element: every element {@code rep} lists as only on a ({@code
   * missingRemote}) names one record of a whose key is one of the keys {@link #load} gave a only,
   * each of those keys once; likewise for b ({@code missingLocal}).
   *
   * @throws IllegalStateException naming the first difference
   */
  static void checkListed(ReplicaAgent a, ReplicaAgent b, RoundReport rep, long d) {
    String wrong = listedAgainstTruth(a, b, rep, d);
    if (wrong != null) {
      throw new IllegalStateException("latency round " + wrong);
    }
  }

  /**
   * The comparison of {@link #checkListed}: null when the round listed exactly the truth, else what
   * it listed against the truth.
   */
  static String listedAgainstTruth(ReplicaAgent a, ReplicaAgent b, RoundReport rep, long d) {
    List<String> onA = new ArrayList<>();
    List<String> onB = new ArrayList<>();
    long listed = 0;
    for (PartitionOutcome o : rep.outcomes) {
      listed += o.missingRemote().length + o.missingLocal().length;
      for (ReplicaRecord r : a.store().recordsFor(o.partition(), o.missingRemote())) {
        onA.add(new String(r.key(), StandardCharsets.UTF_8));
      }
      for (ReplicaRecord r : b.store().recordsFor(o.partition(), o.missingLocal())) {
        onB.add(new String(r.key(), StandardCharsets.UTF_8));
      }
    }
    List<String> truthA = loadedKeys("a", (d + 1) / 2);
    List<String> truthB = loadedKeys("b", d / 2);
    Collections.sort(onA);
    Collections.sort(onB);
    if (listed != d || !onA.equals(truthA) || !onB.equals(truthB)) {
      return String.format(
          "listed %d elements naming %d keys only on a and %d only on b (%s);"
              + " the truth is %d and %d",
          listed,
          onA.size(),
          onB.size(),
          onA.equals(truthA) && onB.equals(truthB) ? "the right keys" : "other keys",
          truthA.size(),
          truthB.size());
    }
    return null;
  }

  /** The keys {@link #load} gives one side only ({@link #key}), sorted. */
  private static List<String> loadedKeys(String prefix, long count) {
    List<String> keys = new ArrayList<>();
    for (long i = 0; i < count; i++) {
      keys.add(new String(key(prefix, i), StandardCharsets.UTF_8));
    }
    Collections.sort(keys);
    return keys;
  }

  // ------------------------------------------------------------------------------ stream

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
   * {@code randomKeys} a trial's new keys are {@link #randomKey}s, spread over each partition's key
   * order, instead of {@code s<trial>-<i>}, which fall together. {@code sets} are agent settings
   * for both agents.
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
    try (ReplicaAgent a = start("a", dir, sets);
        ReplicaAgent b = start("b", dir, sets)) {
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
                  randomKeys ? randomKey(t, i) : key("s" + t + "-", i),
                  value(rnd, valueBytes),
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
        awaitIdle(a, b);
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
          rep = round(a, peer, false);
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
      wipe(dir);
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

  // ------------------------------------------------------------------------------ helpers

  /**
   * One round. The responder may count the previous round as active for a moment after the
   * initiator's report completes (it sees the close later), and agents allow one round per peer at
   * a time; so the caller first waits for both agents to be idle ({@link #awaitIdle}) and a round
   * that still fails is retried (at most 20 times). Callers time this call; a refused attempt costs
   * a connect and a refusal, and the number of retries is logged.
   */
  private static RoundReport round(ReplicaAgent a, HostPort peer, boolean dryRun) throws Exception {
    RoundReport r = null;
    for (int attempt = 0; attempt < 20; attempt++) {
      if (attempt > 0) {
        retries++;
        Thread.sleep(50);
      }
      r =
          a.repair(peer, dryRun)
              .toCompletionStage()
              .toCompletableFuture()
              .get(30, TimeUnit.MINUTES);
      if (r.ok) {
        break;
      }
    }
    if (!r.ok) {
      throw new IllegalStateException("benchmark round failed 20 times, last: " + r.error);
    }
    return r;
  }

  /** Rounds retried so far (see {@link #round}). */
  static int retries;

  /** Waits (at most 5 s) until neither agent reports an active session. */
  private static void awaitIdle(ReplicaAgent... agents) throws InterruptedException {
    long end = System.nanoTime() + 5_000_000_000L;
    for (ReplicaAgent x : agents) {
      while (System.nanoTime() < end && activeSessions(x) > 0) {
        Thread.sleep(5);
      }
    }
  }

  /**
   * Waits (at most 15 minutes) until neither agent's RocksDB has flushed or compacted anything for
   * {@link #QUIET_NANOS} in a row: a round timed right after loading 2 x 10^7 records otherwise
   * shares the 2 cores with the flushes and compactions of what was just written, which a replica
   * in service is not doing all the time. One look is not enough: right after the load nothing may
   * run yet while the last memtables wait to be flushed, and each flush can start a compaction.
   * Returns when the last flush or compaction seen ended, in seconds after the load.
   */
  private static double settle(ReplicaAgent... agents) throws Exception {
    return waitUntilQuiet(() -> busy(agents), 15 * 60_000_000_000L);
  }

  /**
   * Polls {@code busy} every 0.1 s until it has said false for {@link #QUIET_NANOS} in a row, or
   * {@code maxNanos} have passed; returns when it last said true, in seconds from the call.
   */
  static double waitUntilQuiet(Callable<Boolean> busy, long maxNanos) throws Exception {
    long t0 = System.nanoTime();
    long end = t0 + maxNanos;
    long quietSince = t0;
    while (System.nanoTime() < end) {
      if (busy.call()) {
        quietSince = System.nanoTime();
      } else if (System.nanoTime() - quietSince >= QUIET_NANOS) {
        break;
      }
      Thread.sleep(100);
    }
    return (quietSince - t0) / 1e9;
  }

  /** How long RocksDB must stay idle before the timed rounds start (see {@link #settle}). */
  static final long QUIET_NANOS = 3_000_000_000L;

  /** Whether either agent's RocksDB flushes, compacts or has work of that kind queued. */
  private static boolean busy(ReplicaAgent... agents) {
    for (ReplicaAgent x : agents) {
      if (x.store().rocksProperty("records", "rocksdb.num-running-compactions") > 0
          || x.store().rocksProperty("records", "rocksdb.num-running-flushes") > 0) {
        return true;
      }
      for (String cf : List.of("records", "digests")) {
        if (x.store().rocksProperty(cf, "rocksdb.compaction-pending") > 0
            || x.store().rocksProperty(cf, "rocksdb.mem-table-flush-pending") > 0
            || x.store().rocksProperty(cf, "rocksdb.num-immutable-mem-table") > 0) {
          return true;
        }
      }
    }
    return false;
  }

  private static double activeSessions(ReplicaAgent x) {
    for (String line : x.metrics().scrape().split("\n")) {
      if (line.startsWith("reconcile_active_sessions")) {
        return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return 0;
  }

  /** An agent of the bench's settings, then {@code sets} (the caller's extra settings). */
  private static ReplicaAgent start(String node, Path dir, Map<String, String> sets)
      throws Exception {
    Map<String, String> m = new HashMap<>();
    m.put("node-id", node);
    m.put("cluster-id", "bench");
    m.put("data", dir.resolve(node).toString());
    m.put("peer-listen", "127.0.0.1:0");
    m.put("http-listen", "127.0.0.1:0");
    m.put("repair-interval", "0");
    m.put("purge-interval", "0");
    m.put("session-timeout", "30m");
    m.put("idle-timeout", "5m");
    m.putAll(sets);
    return ReplicaAgent.start(AgentConfig.fromMap(m));
  }

  private static byte[] key(String prefix, long i) {
    return (prefix + i).getBytes(StandardCharsets.UTF_8);
  }

  /**
   * A stream trial's key {@code i} spread over the whole key order: 16 hex digits of a bijective
   * mix ({@link HashSpec#mix13}, SplitMix64's finalizer) of {@code trial} and {@code i}, so
   * distinct for distinct pairs.
   */
  public static byte[] randomKey(int trial, int i) {
    long z = HashSpec.mix13(((long) trial << 32) | (i & 0xffffffffL));
    return String.format("%016x", z).getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] value(SplittableRandom rnd, int n) {
    byte[] v = new byte[n];
    for (int i = 0; i < n; i += 8) {
      long x = rnd.nextLong();
      for (int j = 0; j < 8 && i + j < n; j++) {
        v[i + j] = (byte) (x >>> (8 * j));
      }
    }
    return v;
  }

  static void wipe(Path dir) {
    try {
      dev.reconcile.cli.FileTrees.delete(dir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot remove " + dir + ": " + e.getMessage(), e);
    }
  }
}
