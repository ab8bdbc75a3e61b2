package dev.reconcile.cli.bench;

import dev.reconcile.agent.cluster.PartitionDigest;
import dev.reconcile.agent.cluster.PeerChoice;
import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.LocalRound;
import dev.reconcile.core.MemorySketches;
import dev.reconcile.core.PartitionOutcome;
import dev.reconcile.core.ReconcileSession;
import dev.reconcile.core.SessionConfig;
import dev.reconcile.core.SessionLimits;
import dev.reconcile.core.SketchParams;
import dev.reconcile.estimator.EstimatorKinds;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Consumer;

/**
 * Cluster mode beyond one machine, by simulation: N in-memory replicas (core's {@link
 * MemorySketches}), every round the real {@link ReconcileSession} pumped between two of them, the
 * peers chosen by the agent's own {@link PeerChoice}, under a stream of writes with lost rounds.
 *
 * <p>Model, per interval (all replicas in lock-step, synchronous rounds):
 *
 * <ol>
 *   <li>the write stream adds new elements at random replicas (only there);
 *   <li>every replica publishes its {@link PartitionDigest} (at most once per interval, as the
 *       agent) with a growing sequence number;
 *   <li>replicas, in random order, choose peers with {@link PeerChoice} from the published entries
 *       and their own history (last attempt, last success); a round needs a free session on both
 *       sides ({@code maxSessions}, both roles together, as the agent's {@code max-sessions}), else
 *       it is refused ({@code BUSY}) and counts as an attempt;
 *   <li>each round runs the real session on the sets as they were at the start of the interval; it
 *       is lost (its bytes spent, nothing applied) with probability {@code loss}; otherwise each
 *       side receives the elements the session found it lacks, at the end of the interval.
 * </ol>
 *
 * <p>The all-pairs policy (the static {@code peers} mode: every replica starts a round with every
 * other one every interval, no session limit) is simulated the same way for small N; above {@code
 * allPairsFullMax} its rounds per replica are N - 1 by definition, its spread is computed from the
 * same set logic (a successful round gives each side the other's elements), and its bytes per round
 * are measured on {@code allPairsSample} random pairs per interval.
 */
public final class GossipSimulation {
  private static final SessionLimits LIMITS = new SessionLimits(Integer.MAX_VALUE - 8, 1 << 16);

  /** Settings of one run. */
  public record Config(
      int[] ns,
      int writeIntervals,
      int maxIntervals,
      double writesPerInterval,
      double loss,
      int fanout,
      int gossipEvery,
      int maxSessions,
      int partitionsLog2,
      int ibltMaxLog2,
      int baseElements,
      int allPairsFullMax,
      int allPairsSample,
      boolean allPairs,
      long seed) {}

  /** One policy at one N. */
  public record Row(
      String policy,
      int n,
      int writes,
      int unspread,
      double spreadMedian,
      double spreadP90,
      double spreadMax,
      double roundsPerReplica,
      double bytesPerReplica,
      double refusedPerReplica,
      double lostPerReplica,
      double bytesPerRound,
      int intervals,
      boolean sampled,
      double seconds) {}

  private final Config config;
  private final EstimatorFactory estimators = EstimatorKinds.defaults();
  private final SketchParams params;
  private final int partitionShift;

  public GossipSimulation(Config config) {
    this.config = config;
    this.params =
        new SketchParams(
            HashSpec.xxh3(0x60551BL ^ config.seed()),
            config.partitionsLog2(),
            3,
            config.ibltMaxLog2(),
            estimators.params());
    this.partitionShift = 64 - config.partitionsLog2();
  }

  /** Every N, the cluster policy, then (if enabled) all-pairs. */
  public List<Row> run(Consumer<String> progress) {
    List<Row> rows = new ArrayList<>();
    for (int n : config.ns()) {
      rows.add(new World(n, false).run(progress));
      if (config.allPairs()) {
        rows.add(new World(n, true).run(progress));
      }
    }
    return rows;
  }

  int partitionOf(long e) {
    return config.partitionsLog2() == 0 ? 0 : (int) (e >>> partitionShift);
  }

  /** One simulated cluster of {@code n} replicas under one policy. */
  private final class World {
    final int n;
    final boolean allPairs;
    final boolean sampled;
    final SplittableRandom rnd;
    final long[][] sets; // sorted, signed order
    final long[] setHash;
    final PartitionDigest[] published;
    final long[] seq;
    final long[][] lastAttempt;
    final long[][] seqAtSuccess;
    final PartitionDigest[][] ownAfterSuccess;
    final long[] lastGossip;
    final Map<Long, MemorySketches> sketchCache = new HashMap<>();
    final PeerChoice choice;
    // Writes: element -> interval written; and how many replicas hold it.
    final List<long[]> writes = new ArrayList<>(); // {element, interval, holders, spreadAt}
    final Map<Long, Integer> writeIndex = new HashMap<>();
    long rounds;
    long refused;
    long lost;
    long bytes;
    long bytesRounds; // rounds whose bytes were measured (sampled all-pairs)
    int measuredIntervals;

    World(int n, boolean allPairs) {
      this.n = n;
      this.allPairs = allPairs;
      this.sampled = allPairs && n > config.allPairsFullMax();
      this.rnd = new SplittableRandom(config.seed() * 1_000_003L + n * 31L + (allPairs ? 7 : 0));
      this.choice = new PeerChoice(config.fanout(), config.gossipEvery() * 1000L);
      long[] base = new long[config.baseElements()];
      SplittableRandom b = new SplittableRandom(config.seed());
      for (int i = 0; i < base.length; i++) {
        base[i] = b.nextLong();
      }
      Arrays.sort(base);
      sets = new long[n][];
      setHash = new long[n];
      long h = hashOf(base);
      for (int i = 0; i < n; i++) {
        sets[i] = base;
        setHash[i] = h;
      }
      published = new PartitionDigest[n];
      seq = new long[n];
      boolean policyState = !allPairs;
      lastAttempt = policyState ? new long[n][n] : null;
      seqAtSuccess = policyState ? new long[n][n] : null;
      ownAfterSuccess = policyState ? new PartitionDigest[n][n] : null;
      if (policyState) {
        for (long[] row : seqAtSuccess) {
          Arrays.fill(row, -1);
        }
      }
      lastGossip = new long[n];
    }

    long hashOf(long[] s) {
      long h = s.length * 0x9E3779B97F4A7C15L;
      for (long e : s) {
        h += mix(e);
      }
      return h;
    }

    long mix(long x) {
      x ^= x >>> 33;
      x *= 0xff51afd7ed558ccdL;
      x ^= x >>> 33;
      x *= 0xc4ceb9fe1a85ec53L;
      return x ^ (x >>> 33);
    }

    MemorySketches sketches(int i) {
      return sketchCache.computeIfAbsent(
          setHash[i],
          k -> {
            long[] s = sets[i];
            int[] parts = new int[s.length];
            for (int j = 0; j < s.length; j++) {
              parts[j] = partitionOf(s[j]);
            }
            return MemorySketches.of(params, estimators, parts, s);
          });
    }

    PartitionDigest digest(int i) {
      MemorySketches s = sketches(i);
      return PartitionDigest.of(config.partitionsLog2(), s::fingerprint);
    }

    Row run(Consumer<String> progress) {
      long t0 = System.nanoTime();
      double owed = 0;
      int t = 0;
      for (; t < config.maxIntervals(); t++) {
        boolean writing = t < config.writeIntervals();
        if (writing) {
          owed += config.writesPerInterval();
          while (owed >= 1) {
            owed -= 1;
            write(rnd.nextInt(n), t);
          }
          measuredIntervals++;
        }
        interval(t, writing);
        if (!writing && allSpread()) {
          t++;
          break;
        }
      }
      int unspread = 0;
      List<Double> spread = new ArrayList<>();
      for (long[] w : writes) {
        if (w[3] < 0) {
          unspread++;
        } else {
          spread.add((double) (w[3] - w[1] + 1));
        }
      }
      double[] sp = spread.stream().mapToDouble(Double::doubleValue).sorted().toArray();
      double per = (double) n * Math.max(1, measuredIntervals);
      String policy = allPairs ? "all-pairs" : "cluster";
      double roundsPer = sampled ? n - 1 : rounds / per;
      double bytesPerRound = bytesRounds == 0 ? 0 : (double) bytes / bytesRounds;
      double bytesPer = sampled ? bytesPerRound * (n - 1) : bytes / per;
      Row r =
          new Row(
              policy,
              n,
              writes.size(),
              unspread,
              quantile(sp, 0.5),
              quantile(sp, 0.9),
              sp.length == 0 ? Double.NaN : sp[sp.length - 1],
              roundsPer,
              bytesPer,
              refused / per,
              lost / per,
              bytesPerRound,
              t,
              sampled,
              (System.nanoTime() - t0) / 1e9);
      progress.accept(
          String.format(
              "gossip: %s N=%d: spread median %.1f, max %.0f intervals; %.2f rounds and %.0f bytes"
                  + " per replica per interval%s (%.1f s)",
              policy,
              n,
              r.spreadMedian(),
              r.spreadMax(),
              r.roundsPerReplica(),
              r.bytesPerReplica(),
              sampled ? " (bytes from sampled rounds)" : "",
              r.seconds()));
      return r;
    }

    void write(int replica, int t) {
      long e = rnd.nextLong();
      writes.add(new long[] {e, t, 0, -1});
      writeIndex.put(e, writes.size() - 1);
      sets[replica] = insert(sets[replica], new long[] {e});
      setHash[replica] = hashOf(sets[replica]);
    }

    boolean allSpread() {
      for (long[] w : writes) {
        if (w[3] < 0) {
          return false;
        }
      }
      return true;
    }

    void interval(int t, boolean measure) {
      long now = (t + 1) * 1000L;
      for (int i = 0; i < n; i++) {
        published[i] = digest(i);
        seq[i]++;
      }
      List<List<long[]>> incoming = newIncoming();
      int[] busy = new int[n];
      List<int[]> succeeded = new ArrayList<>();
      if (allPairs) {
        allPairsRounds(incoming, measure);
      } else {
        int[] order = permutation();
        for (int i : order) {
          List<PeerChoice.Candidate> cs = new ArrayList<>(n - 1);
          for (int j = 0; j < n; j++) {
            if (j != i) {
              cs.add(
                  new PeerChoice.Candidate(
                      Integer.toString(j),
                      published[j],
                      seq[j],
                      lastAttempt[i][j],
                      seqAtSuccess[i][j],
                      ownAfterSuccess[i][j]));
            }
          }
          for (PeerChoice.Pick p : choice.choose(published[i], cs, now, lastGossip[i], rnd)) {
            int j = Integer.parseInt(p.id());
            if (p.reason() == PeerChoice.Reason.GOSSIP) {
              lastGossip[i] = now;
            }
            lastAttempt[i][j] = now;
            if (measure) {
              rounds++;
            }
            if (busy[i] >= config.maxSessions() || busy[j] >= config.maxSessions()) {
              if (measure) {
                refused++;
              }
              continue;
            }
            busy[i]++;
            busy[j]++;
            if (round(i, j, incoming, measure)) {
              succeeded.add(new int[] {i, j, (int) seq[j]});
            }
          }
        }
      }
      apply(incoming, t);
      if (!allPairs) {
        for (int[] s : succeeded) {
          seqAtSuccess[s[0]][s[1]] = s[2];
          ownAfterSuccess[s[0]][s[1]] = digest(s[0]);
        }
      }
      java.util.Set<Long> inUse = new java.util.HashSet<>();
      for (long h : setHash) {
        inUse.add(h);
      }
      sketchCache.keySet().retainAll(inUse);
    }

    List<List<long[]>> newIncoming() {
      List<List<long[]>> in = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        in.add(new ArrayList<>());
      }
      return in;
    }

    void allPairsRounds(List<List<long[]>> incoming, boolean measure) {
      if (!sampled) {
        for (int i = 0; i < n; i++) {
          for (int j = 0; j < n; j++) {
            if (i != j) {
              if (measure) {
                rounds++;
              }
              round(i, j, incoming, measure);
            }
          }
        }
        return;
      }
      // Spread from set logic over every pair; bytes from a sample of real sessions.
      for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
          if (i == j) {
            continue;
          }
          if (rnd.nextDouble() < config.loss()) {
            if (measure) {
              lost++;
            }
          } else if (setHash[i] != setHash[j]) {
            incoming.get(i).add(minus(sets[j], sets[i]));
            incoming.get(j).add(minus(sets[i], sets[j]));
          }
        }
      }
      if (measure) {
        for (int k = 0; k < config.allPairsSample(); k++) {
          int i = rnd.nextInt(n);
          int j = rnd.nextInt(n - 1);
          j = j >= i ? j + 1 : j;
          bytes += session(i, j).bytes;
          bytesRounds++;
        }
      }
    }

    /** One round (initiator i, responder j); true when it succeeded and was not lost. */
    boolean round(int i, int j, List<List<long[]>> incoming, boolean measure) {
      Result r = session(i, j);
      if (measure) {
        bytes += r.bytes;
        bytesRounds++;
      }
      if (rnd.nextDouble() < config.loss()) {
        if (measure) {
          lost++;
        }
        return false;
      }
      incoming.get(i).add(r.initiatorLacks);
      incoming.get(j).add(r.responderLacks);
      return true;
    }

    void apply(List<List<long[]>> incoming, int t) {
      for (int i = 0; i < n; i++) {
        if (incoming.get(i).isEmpty()) {
          continue;
        }
        long[] add =
            incoming.get(i).stream().flatMapToLong(Arrays::stream).sorted().distinct().toArray();
        long[] before = sets[i];
        long[] after = insert(before, add);
        if (after.length != before.length) {
          sets[i] = after;
          setHash[i] = hashOf(after);
        }
      }
      for (long[] w : writes) {
        if (w[3] >= 0) {
          continue;
        }
        int holders = 0;
        for (int i = 0; i < n; i++) {
          if (Arrays.binarySearch(sets[i], w[0]) >= 0) {
            holders++;
          }
        }
        w[2] = holders;
        if (holders == n) {
          w[3] = t;
        }
      }
    }

    int[] permutation() {
      int[] p = new int[n];
      for (int i = 0; i < n; i++) {
        p[i] = i;
      }
      for (int i = n - 1; i > 0; i--) {
        int k = rnd.nextInt(i + 1);
        int x = p[i];
        p[i] = p[k];
        p[k] = x;
      }
      return p;
    }

    Result session(int i, int j) {
      Result res = new Result(); // identical sets too: the session runs its fast path
      ReconcileSession a =
          ReconcileSession.initiator(
              new SessionConfig("sim", "r" + i, rnd.nextLong(), null, LIMITS), sketches(i));
      ReconcileSession b =
          ReconcileSession.responder(
              new SessionConfig("sim", "r" + j, 0, null, LIMITS), sketches(j));
      LocalRound.run(a, b);
      if (!a.succeeded() || !b.succeeded()) {
        throw new IllegalStateException(
            "simulated session failed: "
                + a.failure()
                    .map(Object::toString)
                    .orElse(b.failure().map(Object::toString).orElse("?")));
      }
      res.bytes = a.stats().bytesTotal();
      long[] il = new long[0];
      long[] rl = new long[0];
      for (PartitionOutcome o : a.outcomes()) {
        il = concat(il, o.missingLocal());
        rl = concat(rl, o.missingRemote());
      }
      res.initiatorLacks = il;
      res.responderLacks = rl;
      return res;
    }
  }

  private static final class Result {
    long bytes;
    long[] initiatorLacks;
    long[] responderLacks;
  }

  static long[] concat(long[] a, long[] b) {
    if (b.length == 0) {
      return a;
    }
    long[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  /** Sorted union of sorted {@code s} and sorted {@code add}. */
  static long[] insert(long[] s, long[] add) {
    long[] sortedAdd = add.clone();
    Arrays.sort(sortedAdd);
    long[] out = new long[s.length + sortedAdd.length];
    int i = 0;
    int j = 0;
    int k = 0;
    while (i < s.length || j < sortedAdd.length) {
      long x;
      if (j >= sortedAdd.length || (i < s.length && s[i] <= sortedAdd[j])) {
        x = s[i++];
      } else {
        x = sortedAdd[j++];
      }
      if (k == 0 || out[k - 1] != x) {
        out[k++] = x;
      }
    }
    return Arrays.copyOf(out, k);
  }

  /** Elements of sorted {@code a} not in sorted {@code b}. */
  static long[] minus(long[] a, long[] b) {
    long[] out = new long[a.length];
    int k = 0;
    int j = 0;
    for (long x : a) {
      while (j < b.length && b[j] < x) {
        j++;
      }
      if (j >= b.length || b[j] != x) {
        out[k++] = x;
      }
    }
    return Arrays.copyOf(out, k);
  }

  static double quantile(double[] sorted, double q) {
    if (sorted.length == 0) {
      return Double.NaN;
    }
    int k = (int) Math.ceil(q * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, k))];
  }
}
