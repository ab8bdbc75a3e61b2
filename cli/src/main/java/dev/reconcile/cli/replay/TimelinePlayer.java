package dev.reconcile.cli.replay;

import dev.reconcile.agent.LocalReplica;
import dev.reconcile.cli.replay.Scenario.Event;
import dev.reconcile.cli.replay.Scenario.Keys;
import dev.reconcile.cli.replay.Scenario.Size;
import dev.reconcile.cli.replay.ScenarioReport.Check;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The second phase of a run: plays the timeline's events in order (writes and deletes acknowledged
 * in the model, repairs with their expected outcome, link faults on the proxies, crashes, restarts,
 * pauses, waits); async steps run beside the next ones until an {@code await} or the end.
 */
final class TimelinePlayer implements AutoCloseable {
  private final RunContext ctx;
  private final List<Future<?>> pending = new ArrayList<>();
  private final Map<String, Long> linkBaseline = new ConcurrentHashMap<>();
  private final AtomicLong salt = new AtomicLong(1);
  private final ExecutorService async =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "replay-async");
            t.setDaemon(true);
            return t;
          });

  TimelinePlayer(RunContext ctx) {
    this.ctx = ctx;
  }

  /** Plays every event, then waits for the async ones. */
  void run() throws Exception {
    for (Event e : ctx.s.timeline()) {
      try {
        play(e);
      } catch (ScenarioException x) {
        throw x;
      } catch (Exception x) {
        throw new ScenarioException(
            "scenario " + ctx.s.file() + ": timeline[" + e.index() + "]: " + x, x);
      }
    }
    awaitPending();
  }

  private void maybeAsync(boolean isAsync, Callable<Void> step) throws Exception {
    if (isAsync) {
      pending.add(async.submit(step));
    } else {
      step.call();
    }
  }

  private void play(Event e) throws Exception {
    if (e instanceof Scenario.Write w) {
      maybeAsync(
          w.async(),
          () -> {
            write(w);
            return null;
          });
    } else if (e instanceof Scenario.Repair r) {
      linkBaseline.put(pairKey(r.from(), r.to()), ctx.linkBytes(r.from(), r.to()));
      maybeAsync(
          r.async(),
          () -> {
            repair(r);
            return null;
          });
    } else if (e instanceof Scenario.LinkFault f) {
      linkFault(f);
    } else if (e instanceof Scenario.Lifecycle l) {
      lifecycle(l);
    } else if (e instanceof Scenario.Sleep sl) {
      Thread.sleep(sl.duration().toMillis());
    } else if (e instanceof Scenario.WaitBytes w) {
      waitBytes(w);
    } else {
      awaitPending();
    }
  }

  /** The keys of a write step with their generator indices (explicit keys: their hash code). */
  private record KeySet(List<byte[]> keys, List<Long> indexes) {}

  private KeySet keys(Scenario.Write w) {
    List<byte[]> keys = new ArrayList<>();
    List<Long> indexes = new ArrayList<>();
    Keys k = w.keys();
    if (k.explicit() != null) {
      for (String x : k.explicit()) {
        keys.add(x.getBytes(StandardCharsets.UTF_8));
        indexes.add((long) x.hashCode());
      }
      return new KeySet(keys, indexes);
    }
    List<Long> chosen = new ArrayList<>();
    if (k.fresh()) {
      long first = ctx.fresh.getAndAdd(k.count());
      for (long i = first; i < first + k.count(); i++) {
        chosen.add(i);
      }
    } else if (k.count() >= k.to() - k.from()) {
      for (long i = k.from(); i < k.to(); i++) {
        chosen.add(i);
      }
    } else {
      SplittableRandom rnd = new SplittableRandom(KeyGen.mix(w.index() * 31L + 7));
      Set<Long> drawn = new LinkedHashSet<>();
      while (drawn.size() < k.count()) {
        drawn.add(k.from() + rnd.nextLong(k.to() - k.from()));
      }
      chosen.addAll(drawn);
    }
    for (long i : chosen) {
      keys.add(ctx.gen.key(i));
      indexes.add(i);
    }
    return new KeySet(keys, indexes);
  }

  private void write(Scenario.Write w) throws Exception {
    KeySet ks = keys(w);
    Size vs = w.valueSize() == null ? ctx.valueSize : w.valueSize();
    for (String name : w.on()) {
      if (!ctx.cluster.running(name)) {
        throw ctx.fail(w.index(), "replica " + name + " is down (restart it first)");
      }
      long origin = LocalReplica.origin(name);
      for (int i = 0; i < ks.keys().size(); i++) {
        byte[] key = ks.keys().get(i);
        if (w.delete()) {
          long v = ctx.cluster.delete(name, key);
          ctx.model.ackDelete(name, key, v, origin);
        } else {
          byte[] value = ctx.gen.value(ks.indexes().get(i), salt.getAndIncrement(), vs);
          long v = ctx.cluster.put(name, key, value);
          ctx.model.ack(name, key, value, v, origin);
        }
      }
    }
    ctx.say(
        "timeline[%d]: %s %d keys on %s",
        w.index(), w.delete() ? "deleted" : "wrote", ks.keys().size(), String.join(",", w.on()));
  }

  private void repair(Scenario.Repair e) throws Exception {
    RoundResult r = ctx.repairNow(e.from(), e.to());
    ctx.say(
        "timeline[%d]: repair %s->%s %s: %d protocol bytes, %d records moved, %d ms",
        e.index(),
        e.from(),
        e.to(),
        r.ok() ? "ok" : "failed (" + r.error() + ")",
        r.protocolBytes(),
        r.recordsMoved(),
        r.millis());
    if (!e.expect().equals("any")) {
      boolean ok = e.expect().equals("ok") == r.ok();
      ctx.checks.add(
          new Check(
              "timeline[" + e.index() + "] repair " + e.from() + "->" + e.to() + " " + e.expect(),
              ok,
              r.ok()
                  ? "round ok, " + r.recordsMoved() + " records moved"
                  : "round failed: " + r.error()));
    }
  }

  private static String pairKey(String a, String b) {
    return a.compareTo(b) < 0 ? a + "|" + b : b + "|" + a;
  }

  private void waitBytes(Scenario.WaitBytes w) throws InterruptedException {
    long base = linkBaseline.getOrDefault(pairKey(w.a(), w.b()), 0L);
    long deadline = System.nanoTime() + w.timeout().toNanos();
    long seen;
    while ((seen = ctx.linkBytes(w.a(), w.b()) - base) < w.bytes()) {
      if (System.nanoTime() > deadline) {
        ctx.checks.add(
            new Check(
                "timeline[" + w.index() + "] wait",
                false,
                "link "
                    + w.a()
                    + "-"
                    + w.b()
                    + " carried only "
                    + seen
                    + " of "
                    + w.bytes()
                    + " bytes in "
                    + w.timeout()));
        return;
      }
      Thread.sleep(5);
    }
    ctx.say("timeline[%d]: link %s-%s carried %d bytes", w.index(), w.a(), w.b(), seen);
  }

  private void linkFault(Scenario.LinkFault f) {
    for (FaultProxy p : ctx.both(f.a(), f.b())) {
      switch (f.kind()) {
        case "partition" -> p.partition();
        case "blackhole" -> p.blackhole();
        case "heal" -> p.heal();
        case "delay" -> p.delay(f.amount());
        default -> p.resetAfter(f.amount());
      }
    }
    ctx.say("timeline[%d]: %s %s-%s", f.index(), f.kind(), f.a(), f.b());
  }

  private void lifecycle(Scenario.Lifecycle l) throws Exception {
    String r = l.replica();
    switch (l.kind()) {
      case "crash" -> ctx.cluster.crash(r);
      case "restart" -> ctx.cluster.restart(r);
      case "pause" -> {
        if (!ctx.cluster.pause(r)) {
          isolate(r, true);
        }
        ctx.paused.add(r);
      }
      default -> {
        if (ctx.paused.remove(r)) {
          if (ctx.cluster.mode().equals("jvm")) {
            isolate(r, false);
          } else {
            ctx.cluster.resume(r);
          }
        }
      }
    }
    ctx.say("timeline[%d]: %s %s", l.index(), l.kind(), r);
  }

  /** Blackholes (or heals) every link of {@code r}: a pause where the cluster cannot freeze. */
  private void isolate(String r, boolean on) {
    for (String o : ctx.names) {
      if (!o.equals(r)) {
        ctx.both(r, o).forEach(on ? FaultProxy::blackhole : FaultProxy::heal);
      }
    }
  }

  private void awaitPending() throws Exception {
    for (Future<?> f : pending) {
      try {
        f.get(10, TimeUnit.MINUTES);
      } catch (ExecutionException e) {
        Throwable c = e.getCause();
        if (c instanceof ScenarioException se) {
          throw se;
        }
        throw new ScenarioException("scenario " + ctx.s.file() + ": async step failed: " + c, c);
      }
    }
    pending.clear();
  }

  @Override
  public void close() {
    async.shutdownNow();
  }
}
