package dev.reconcile.cli.replay;

import dev.reconcile.cli.replay.Scenario.Size;
import dev.reconcile.cli.replay.ScenarioReport.Check;
import dev.reconcile.core.HashSpec;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the phases of one run share: the scenario, the cluster and its proxies, the model, the
 * rounds and checks recorded so far, and the key generator. Set-up ({@link ClusterSetup}) fills the
 * proxies, hash specs and key state; the timeline ({@link TimelinePlayer}), settling ({@link
 * Settling}) and verification ({@link Verifier}) read them.
 */
final class RunContext {
  final Scenario s;
  final Cluster cluster;
  final Path runDir;
  final List<String> names;
  final Model model = new Model();

  /** One proxy per directed link, keyed {@link #link}. */
  final Map<String, FaultProxy> proxies = new LinkedHashMap<>();

  /** Each replica's hash spec (value hashes of the model's order). */
  final Map<String, HashSpec> specs = new LinkedHashMap<>();

  final List<RoundResult> rounds = Collections.synchronizedList(new ArrayList<>());
  final List<Check> checks = Collections.synchronizedList(new ArrayList<>());

  /** Replicas paused and not yet resumed. */
  final Set<String> paused = ConcurrentHashMap.newKeySet();

  /** Next fresh key index (after the generated ones). */
  final AtomicLong fresh = new AtomicLong();

  KeyGen gen = new KeyGen(1, new Size(16, 16));
  Size valueSize = new Size(32, 32);
  long initialRecords;

  private final PrintWriter log;

  RunContext(Scenario s, Cluster cluster, Path runDir, PrintWriter log) {
    this.s = s;
    this.cluster = cluster;
    this.runDir = runDir;
    this.log = log;
    this.names = List.copyOf(s.replicas().keySet());
  }

  /** A progress line (when the run has a log). */
  void say(String fmt, Object... args) {
    if (log != null) {
      Object[] all = new Object[args.length + 1];
      all[0] = s.name();
      System.arraycopy(args, 0, all, 1, args.length);
      log.printf("  [%s] " + fmt + "%n", all);
      log.flush();
    }
  }

  /** A scenario error naming the file and the timeline step. */
  ScenarioException fail(int index, String problem) {
    return new ScenarioException("scenario " + s.file() + ": timeline[" + index + "]: " + problem);
  }

  static String link(String from, String to) {
    return from + ">" + to;
  }

  /** Both directions of the link a-b; {@code a = "*"}: every link. */
  List<FaultProxy> both(String a, String b) {
    if (a.equals("*")) {
      return new ArrayList<>(proxies.values());
    }
    return List.of(proxies.get(link(a, b)), proxies.get(link(b, a)));
  }

  /** Bytes the link a-b carried, both directions. */
  long linkBytes(String a, String b) {
    return proxies.get(link(a, b)).bytes() + proxies.get(link(b, a)).bytes();
  }

  /** A round {@code from} starts against {@code to}'s proxy, recorded in {@link #rounds}. */
  RoundResult repairNow(String from, String to) throws Exception {
    RoundResult r =
        cluster.running(from)
            ? cluster.repair(from, to, proxies.get(link(from, to)).address())
            : new RoundResult(
                from, to, false, "initiator " + from + " is down", 0, 0, 0, 0, 0, 0, 0);
    rounds.add(r);
    return r;
  }

  /** True when {@code r} is up and not paused (its state can be read). */
  boolean readable(String r) {
    return cluster.running(r) && !paused.contains(r);
  }
}
