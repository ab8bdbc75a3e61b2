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
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

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
 *   <li><b>stream</b>: {@link StreamBench}, on the helpers here.
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

  // ------------------------------------------------------------------------------ helpers

  /**
   * One round. The responder may count the previous round as active for a moment after the
   * initiator's report completes (it sees the close later), and agents allow one round per peer at
   * a time; so the caller first waits for both agents to be idle ({@link #awaitIdle}) and a round
   * that still fails is retried (at most 20 times). Callers time this call; a refused attempt costs
   * a connect and a refusal, and the number of retries is logged.
   */
  static RoundReport round(ReplicaAgent a, HostPort peer, boolean dryRun) throws Exception {
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
  static void awaitIdle(ReplicaAgent... agents) throws InterruptedException {
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
  static ReplicaAgent start(String node, Path dir, Map<String, String> sets) throws Exception {
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

  static byte[] key(String prefix, long i) {
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

  static byte[] value(SplittableRandom rnd, int n) {
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
