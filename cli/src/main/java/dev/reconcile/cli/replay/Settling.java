package dev.reconcile.cli.replay;

import dev.reconcile.cli.replay.ScenarioReport.Check;
import java.util.ArrayList;
import java.util.List;

/**
 * The third phase of a run: lets the cluster converge after the timeline. With {@code converge:
 * {rounds: R, via: V}} the runner starts up to R more rounds over the topology V until every group
 * has equal per-partition fingerprints; with {@code converge: {within: T}} it only waits (for
 * background rounds) up to T. Records one check either way.
 */
final class Settling {
  private final RunContext ctx;

  Settling(RunContext ctx) {
    this.ctx = ctx;
  }

  /** True when every replica of {@code group} is readable and all have equal fingerprints. */
  private boolean converged(List<String> group) throws Exception {
    List<String> first = null;
    for (String r : group) {
      if (!ctx.readable(r)) {
        return false;
      }
      List<String> f = ctx.cluster.fingerprints(r);
      if (first == null) {
        first = f;
      } else if (!first.equals(f)) {
        return false;
      }
    }
    return true;
  }

  private boolean allConverged() throws Exception {
    for (List<String> g : ctx.s.expect().groups()) {
      if (!converged(g)) {
        return false;
      }
    }
    return true;
  }

  /** Settles; returns whether every group converged. */
  boolean run() throws Exception {
    var ex = ctx.s.expect();
    boolean ok;
    if (ex.seconds() != null) {
      long deadline = System.nanoTime() + ex.seconds().toNanos();
      while (!(ok = allConverged()) && System.nanoTime() < deadline) {
        Thread.sleep(100);
      }
      ctx.checks.add(
          new Check(
              "converge within " + ex.seconds().toMillis() + " ms",
              ok,
              ok ? "every group converged" : "not converged in time"));
      return ok;
    }
    List<String[]> plan = new ArrayList<>();
    for (List<String> g : ex.groups()) {
      plan.addAll(ScenarioRunner.pairs(g, ex.via()));
    }
    int extra = 0;
    while (!(ok = allConverged()) && extra < ex.rounds() && !plan.isEmpty()) {
      String[] p = plan.get(extra % plan.size());
      RoundResult r = ctx.repairNow(p[0], p[1]);
      ctx.say(
          "settle: repair %s->%s %s, %d records moved",
          p[0], p[1], r.ok() ? "ok" : "failed (" + r.error() + ")", r.recordsMoved());
      extra++;
    }
    ctx.checks.add(
        new Check(
            "converge within " + ex.rounds() + " more rounds (" + ex.via() + ")",
            ok,
            ok
                ? "converged after " + extra + " runner rounds"
                : "fingerprints still differ after " + extra + " runner rounds"));
    return ok;
  }
}
