package dev.reconcile.cli.replay;

import dev.reconcile.agent.AgentConfig;
import dev.reconcile.agent.KeyCodec;
import dev.reconcile.agent.LocalReplica;
import dev.reconcile.agent.ReplicaAgent;
import dev.reconcile.cli.replay.Scenario.Event;
import dev.reconcile.cli.replay.Scenario.Keys;
import dev.reconcile.cli.replay.Scenario.Size;
import dev.reconcile.cli.replay.ScenarioReport.Check;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.estimator.StrataEstimatorFactory;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Replays one {@link Scenario} on a {@link Cluster}: seeds the data directories, starts the agents
 * behind one {@link FaultProxy} per directed link, plays the timeline, lets the cluster settle
 * (runner repairs, or background rounds) and checks the expectations against its own {@link Model}.
 * Every replica reaches every other only through the proxies, so faults hit the peer protocol and
 * nothing else.
 */
public final class ScenarioRunner {
  /** Agent settings every scenario starts from (the scenario's {@code config} overrides them). */
  public static final Map<String, String> BASE =
      Map.of(
          "cluster-id", "replay",
          "hash-seed", "replay-seed",
          "repair-interval", "0",
          "purge-interval", "0",
          "idle-timeout", "5s");

  /** Origin of seeded (initial) records: as if an earlier writer had replicated them everywhere. */
  static final long SEED_ORIGIN = LocalReplica.origin("replay-seed-writer");

  private final Scenario s;
  private final Cluster cluster;
  private final Path runDir;
  private final PrintWriter log;
  private final List<String> names;
  private final Model model = new Model();
  private final Map<String, FaultProxy> proxies = new LinkedHashMap<>();
  private final Map<String, Map<String, String>> configs = new LinkedHashMap<>();
  private final Map<String, HashSpec> specs = new LinkedHashMap<>();
  private final List<RoundResult> rounds = Collections.synchronizedList(new ArrayList<>());
  private final List<Check> checks = Collections.synchronizedList(new ArrayList<>());
  private final List<Future<?>> pending = new ArrayList<>();
  private final Map<String, Long> linkBaseline = new java.util.concurrent.ConcurrentHashMap<>();
  private final Set<String> paused = new HashSet<>();
  private final ExecutorService async =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "replay-async");
            t.setDaemon(true);
            return t;
          });
  private final AtomicLong fresh = new AtomicLong();
  private final AtomicLong salt = new AtomicLong(1);
  private KeyGen gen;
  private Size valueSize = new Size(32, 32);
  private long initialRecords;

  /** Version of the first seeded record: two minutes in the past, the same for every replica. */
  private final long seedBase = (System.currentTimeMillis() - 120_000) << 16;

  /**
   * @param runDir an empty directory for the replicas' data and logs
   * @param log progress lines (may be null)
   */
  public ScenarioRunner(Scenario scenario, Cluster cluster, Path runDir, PrintWriter log) {
    this.s = scenario;
    this.cluster = cluster;
    this.runDir = runDir;
    this.log = log;
    this.names = List.copyOf(scenario.replicas().keySet());
  }

  /** The agent configuration of {@code replica} (without listen addresses and peers). */
  public static Map<String, String> agentConfig(Scenario s, String replica, Path dataDir) {
    Map<String, String> m = new LinkedHashMap<>(BASE);
    m.putAll(s.config());
    m.putAll(s.replicas().get(replica));
    m.put("node-id", replica);
    m.put("data", dataDir.toString());
    return m;
  }

  private void say(String fmt, Object... args) {
    if (log != null) {
      log.printf("  [%s] " + fmt + "%n", prepend(s.name(), args));
      log.flush();
    }
  }

  private static Object[] prepend(Object a, Object[] rest) {
    Object[] o = new Object[rest.length + 1];
    o[0] = a;
    System.arraycopy(rest, 0, o, 1, rest.length);
    return o;
  }

  public ScenarioReport run() throws Exception {
    long wall0 = System.nanoTime();
    long convergeMillis = -1;
    try {
      setUp();
      long t0 = System.nanoTime();
      for (Event e : s.timeline()) {
        try {
          play(e);
        } catch (ScenarioException x) {
          throw x;
        } catch (Exception x) {
          throw new ScenarioException(
              "scenario " + s.file() + ": timeline[" + e.index() + "]: " + x, x);
        }
      }
      awaitPending();
      boolean converged = settle();
      if (converged) {
        convergeMillis = (System.nanoTime() - t0) / 1_000_000;
      }
      verify();
    } finally {
      for (String p : paused) {
        try {
          cluster.resume(p);
        } catch (Exception e) {
          // closing anyway
        }
      }
      async.shutdownNow();
      cluster.close();
      proxies.values().forEach(FaultProxy::close);
    }
    int failed = 0;
    long proto = 0, moved = 0, rb = 0;
    int dbl = 0, fb = 0;
    synchronized (rounds) {
      for (RoundResult r : rounds) {
        failed += r.ok() ? 0 : 1;
        proto += r.protocolBytes();
        moved += r.recordsMoved();
        rb += r.recordBytes();
        dbl += r.doublings();
        fb += r.fallbacks();
      }
    }
    if (s.expect().minDoublings() > 0) {
      checks.add(
          new Check(
              "at least " + s.expect().minDoublings() + " table doublings",
              dbl >= s.expect().minDoublings(),
              dbl + " doublings"));
    }
    if (s.expect().minFallbacks() > 0) {
      checks.add(
          new Check(
              "at least " + s.expect().minFallbacks() + " fallbacks",
              fb >= s.expect().minFallbacks(),
              fb + " partitions fell back"));
    }
    return new ScenarioReport(
        s.name(),
        cluster.mode(),
        names.size(),
        initialRecords,
        model.acks(),
        List.copyOf(checks),
        rounds.size(),
        failed,
        proto,
        moved,
        rb,
        dbl,
        fb,
        convergeMillis,
        (System.nanoTime() - wall0) / 1_000_000);
  }

  // ------------------------------------------------------------------ set-up

  private static String link(String from, String to) {
    return from + ">" + to;
  }

  private void setUp() throws Exception {
    Files.createDirectories(runDir);
    for (String x : names) {
      for (String y : names) {
        if (!x.equals(y)) {
          proxies.put(link(x, y), new FaultProxy(link(x, y), () -> cluster.peerAddress(y)));
        }
      }
    }
    var g = s.initial().generate();
    gen = g == null ? new KeyGen(1, new Size(16, 16)) : new KeyGen(g.seed(), g.keySize());
    if (g != null) {
      valueSize = g.valueSize();
      fresh.set(g.n());
    }
    for (String name : names) {
      Path data = runDir.resolve(name).resolve("data");
      Map<String, String> c = agentConfig(s, name, data);
      if (s.background() != null) {
        c.put("repair-interval", s.background().interval().toMillis() + "ms");
        List<String> peers = new ArrayList<>();
        for (String[] pair : pairs(names, s.background().via())) {
          String other = pair[0].equals(name) ? pair[1] : pair[1].equals(name) ? pair[0] : null;
          if (other != null) {
            InetSocketAddress a = proxies.get(link(name, other)).address();
            peers.add(a.getHostString() + ":" + a.getPort());
          }
        }
        c.put("peers", String.join(",", new LinkedHashSet<>(peers)));
      }
      configs.put(name, c);
      AgentConfig ac = AgentConfig.fromMap(c);
      specs.put(name, ReplicaAgent.sketchParams(ac, StrataEstimatorFactory.defaults()).spec());
      seed(name, ac, data);
    }
    for (int i = 0; i < names.size(); i++) {
      cluster.start(names.get(i), i, configs.get(names.get(i)));
    }
    say("%d replicas up (%s), %d initial records", names.size(), cluster.mode(), initialRecords);
  }

  /**
   * Copies from-dirs, writes generated and file records straight into the store, acknowledging them
   * in the model.
   */
  private void seed(String name, AgentConfig ac, Path data) throws IOException {
    Path from = s.initial().fromDirs().get(name);
    if (from != null) {
      copyTree(from, data);
    }
    List<ReplicaRecord> records = new ArrayList<>();
    long base = seedBase;
    var g = s.initial().generate();
    if (g != null && s.initial().holders().contains(name)) {
      for (long i = 0; i < g.n(); i++) {
        records.add(
            ReplicaRecord.of(gen.key(i), gen.value(i, 0, g.valueSize()), base + i, SEED_ORIGIN));
      }
    }
    Path file = s.initial().files().get(name);
    if (file != null) {
      long line = 0;
      for (String l : Files.readAllLines(file, StandardCharsets.UTF_8)) {
        line++;
        if (l.isBlank() || l.startsWith("#")) {
          continue;
        }
        int tab = l.indexOf('\t');
        try {
          byte[] k = KeyCodec.decode(tab < 0 ? l : l.substring(0, tab));
          byte[] v = tab < 0 ? new byte[0] : KeyCodec.decode(l.substring(tab + 1));
          records.add(ReplicaRecord.of(k, v, base + (1L << 32) + line, SEED_ORIGIN));
        } catch (IllegalArgumentException e) {
          throw new ScenarioException(
              "scenario "
                  + s.file()
                  + ": initial.files."
                  + name
                  + ": "
                  + file
                  + " line "
                  + line
                  + ": "
                  + e.getMessage());
        }
      }
    }
    if (from == null && records.isEmpty()) {
      return;
    }
    try (LocalReplica store = LocalReplica.open(ac)) {
      if (from != null) {
        store.forEachRecord(r -> model.ack(name, r));
        initialRecords += store.recordCount();
      }
      for (int i = 0; i < records.size(); i += 10_000) {
        store.records().apply(records.subList(i, Math.min(records.size(), i + 10_000)));
      }
    } catch (RuntimeException e) {
      throw new ScenarioException(
          "scenario " + s.file() + ": initial data of " + name + ": " + e.getMessage(), e);
    }
    for (ReplicaRecord r : records) {
      model.ack(name, r);
    }
    initialRecords += records.size();
  }

  private static void copyTree(Path from, Path to) throws IOException {
    Files.walkFileTree(
        from,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs)
              throws IOException {
            Files.createDirectories(to.resolve(from.relativize(dir).toString()));
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
              throws IOException {
            if (!file.getFileName().toString().equals("LOCK")) {
              Files.copy(file, to.resolve(from.relativize(file).toString()));
            }
            return FileVisitResult.CONTINUE;
          }
        });
  }

  /** Repair pairs of a topology over {@code members} (the first member is the star's hub). */
  static List<String[]> pairs(List<String> members, String via) {
    List<String[]> out = new ArrayList<>();
    int n = members.size();
    switch (via) {
      case "ring" -> {
        for (int i = 0; i < n; i++) {
          if (n > 2 || i == 0) {
            out.add(new String[] {members.get(i), members.get((i + 1) % n)});
          }
        }
      }
      case "star" -> {
        for (int i = 1; i < n; i++) {
          out.add(new String[] {members.get(0), members.get(i)});
        }
      }
      default -> {
        for (int i = 0; i < n; i++) {
          for (int j = i + 1; j < n; j++) {
            out.add(new String[] {members.get(i), members.get(j)});
          }
        }
      }
    }
    return out;
  }

  // ------------------------------------------------------------------ timeline

  private void play(Event e) throws Exception {
    if (e instanceof Scenario.Write w) {
      if (w.async()) {
        pending.add(
            async.submit(
                () -> {
                  write(w);
                  return null;
                }));
      } else {
        write(w);
      }
    } else if (e instanceof Scenario.Repair r) {
      linkBaseline.put(pairKey(r.from(), r.to()), linkBytes(r.from(), r.to()));
      if (r.async()) {
        pending.add(
            async.submit(
                () -> {
                  repair(r);
                  return null;
                }));
      } else {
        repair(r);
      }
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

  private void write(Scenario.Write w) throws Exception {
    List<byte[]> keys = new ArrayList<>();
    List<Long> indexes = new ArrayList<>();
    Keys k = w.keys();
    if (k.explicit() != null) {
      for (String x : k.explicit()) {
        keys.add(x.getBytes(StandardCharsets.UTF_8));
        indexes.add((long) x.hashCode());
      }
    } else if (k.fresh()) {
      long first = fresh.getAndAdd(k.count());
      for (long i = first; i < first + k.count(); i++) {
        keys.add(gen.key(i));
        indexes.add(i);
      }
    } else {
      long span = k.to() - k.from();
      if (k.count() >= span) {
        for (long i = k.from(); i < k.to(); i++) {
          keys.add(gen.key(i));
          indexes.add(i);
        }
      } else {
        SplittableRandom rnd = new SplittableRandom(KeyGen.mix(w.index() * 31L + 7));
        Set<Long> chosen = new LinkedHashSet<>();
        while (chosen.size() < k.count()) {
          chosen.add(k.from() + rnd.nextLong(span));
        }
        for (long i : chosen) {
          keys.add(gen.key(i));
          indexes.add(i);
        }
      }
    }
    Size vs = w.valueSize() == null ? valueSize : w.valueSize();
    for (String name : w.on()) {
      if (!cluster.running(name)) {
        throw new ScenarioException(
            "scenario "
                + s.file()
                + ": timeline["
                + w.index()
                + "]: replica "
                + name
                + " is down (restart it first)");
      }
      long origin = LocalReplica.origin(name);
      for (int i = 0; i < keys.size(); i++) {
        byte[] key = keys.get(i);
        if (w.delete()) {
          long v = cluster.delete(name, key);
          model.ack(name, ReplicaRecord.tombstone(key, v, origin));
        } else {
          byte[] value = gen.value(indexes.get(i), salt.getAndIncrement(), vs);
          long v = cluster.put(name, key, value);
          model.ack(name, ReplicaRecord.of(key, value, v, origin));
        }
      }
    }
    say(
        "timeline[%d]: %s %d keys on %s",
        w.index(), w.delete() ? "deleted" : "wrote", keys.size(), String.join(",", w.on()));
  }

  private RoundResult repairNow(String from, String to) throws Exception {
    if (!cluster.running(from)) {
      RoundResult r =
          new RoundResult(from, to, false, "initiator " + from + " is down", 0, 0, 0, 0, 0, 0, 0);
      rounds.add(r);
      return r;
    }
    RoundResult r = cluster.repair(from, to, proxies.get(link(from, to)).address());
    rounds.add(r);
    return r;
  }

  private void repair(Scenario.Repair e) throws Exception {
    RoundResult r = repairNow(e.from(), e.to());
    say(
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
      checks.add(
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

  private long linkBytes(String a, String b) {
    return proxies.get(link(a, b)).bytes() + proxies.get(link(b, a)).bytes();
  }

  private void waitBytes(Scenario.WaitBytes w) throws InterruptedException {
    long base = linkBaseline.getOrDefault(pairKey(w.a(), w.b()), 0L);
    long deadline = System.nanoTime() + w.timeout().toNanos();
    long seen;
    while ((seen = linkBytes(w.a(), w.b()) - base) < w.bytes()) {
      if (System.nanoTime() > deadline) {
        checks.add(
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
    say("timeline[%d]: link %s-%s carried %d bytes", w.index(), w.a(), w.b(), seen);
  }

  private List<FaultProxy> both(String a, String b) {
    if (a.equals("*")) {
      return new ArrayList<>(proxies.values());
    }
    return List.of(proxies.get(link(a, b)), proxies.get(link(b, a)));
  }

  private void linkFault(Scenario.LinkFault f) {
    for (FaultProxy p : both(f.a(), f.b())) {
      switch (f.kind()) {
        case "partition" -> p.partition();
        case "blackhole" -> p.blackhole();
        case "heal" -> p.heal();
        case "delay" -> p.delay(f.amount());
        default -> p.resetAfter(f.amount());
      }
    }
    say("timeline[%d]: %s %s-%s", f.index(), f.kind(), f.a(), f.b());
  }

  private void lifecycle(Scenario.Lifecycle l) throws Exception {
    String r = l.replica();
    switch (l.kind()) {
      case "crash" -> cluster.crash(r);
      case "restart" -> cluster.restart(r);
      case "pause" -> {
        if (!cluster.pause(r)) {
          for (String o : names) {
            if (!o.equals(r)) {
              both(r, o).forEach(FaultProxy::blackhole);
            }
          }
        }
        paused.add(r);
      }
      default -> {
        if (paused.remove(r)) {
          if (cluster.mode().equals("jvm")) {
            for (String o : names) {
              if (!o.equals(r)) {
                both(r, o).forEach(FaultProxy::heal);
              }
            }
          } else {
            cluster.resume(r);
          }
        }
      }
    }
    say("timeline[%d]: %s %s", l.index(), l.kind(), r);
  }

  private void awaitPending() throws Exception {
    for (Future<?> f : pending) {
      try {
        f.get(10, TimeUnit.MINUTES);
      } catch (java.util.concurrent.ExecutionException e) {
        Throwable c = e.getCause();
        if (c instanceof ScenarioException se) {
          throw se;
        }
        throw new ScenarioException("scenario " + s.file() + ": async step failed: " + c, c);
      }
    }
    pending.clear();
  }

  // ------------------------------------------------------------------ settle and verify

  private boolean converged(List<String> group) throws Exception {
    List<String> first = null;
    for (String r : group) {
      if (!cluster.running(r) || paused.contains(r)) {
        return false;
      }
      List<String> f = cluster.fingerprints(r);
      if (first == null) {
        first = f;
      } else if (!first.equals(f)) {
        return false;
      }
    }
    return true;
  }

  private boolean allConverged() throws Exception {
    for (List<String> g : s.expect().groups()) {
      if (!converged(g)) {
        return false;
      }
    }
    return true;
  }

  private boolean settle() throws Exception {
    var ex = s.expect();
    int extra = 0;
    boolean ok;
    if (ex.seconds() != null) {
      long deadline = System.nanoTime() + ex.seconds().toNanos();
      while (!(ok = allConverged()) && System.nanoTime() < deadline) {
        Thread.sleep(100);
      }
      checks.add(
          new Check(
              "converge within " + ex.seconds().toMillis() + " ms",
              ok,
              ok ? "every group converged" : "not converged in time"));
      return ok;
    }
    List<String[]> plan = new ArrayList<>();
    for (List<String> g : ex.groups()) {
      plan.addAll(pairs(g, ex.via()));
    }
    int next = 0;
    while (!(ok = allConverged()) && extra < ex.rounds() && !plan.isEmpty()) {
      String[] p = plan.get(next++ % plan.size());
      RoundResult r = repairNow(p[0], p[1]);
      say(
          "settle: repair %s->%s %s, %d records moved",
          p[0], p[1], r.ok() ? "ok" : "failed (" + r.error() + ")", r.recordsMoved());
      extra++;
    }
    checks.add(
        new Check(
            "converge within " + ex.rounds() + " more rounds (" + ex.via() + ")",
            ok,
            ok
                ? "converged after " + extra + " runner rounds"
                : "fingerprints still differ after " + extra + " runner rounds"));
    return ok;
  }

  private void verify() throws Exception {
    var ex = s.expect();
    for (String r : names) {
      if (cluster.running(r) && !paused.contains(r) && !cluster.selfCheck(r)) {
        checks.add(new Check("selfcheck " + r, false, "maintained sketches differ from a scan"));
      }
    }
    long mismatches = 0, lost = 0, resurrected = 0, extraRecords = 0, keysChecked = 0;
    List<String> examples = new ArrayList<>();
    for (List<String> group : ex.groups()) {
      Set<String> members = new HashSet<>(group);
      HashSpec spec = specs.get(group.get(0));
      List<String> keys = model.keys(members);
      for (String r : group) {
        if (!cluster.running(r) || paused.contains(r)) {
          checks.add(
              new Check("replica " + r, false, "down or paused at the end: nothing to verify"));
          continue;
        }
        Map<String, Observed> seen = cluster.read(r, keys);
        long elements = 0;
        for (String f : cluster.fingerprints(r)) {
          elements += Long.parseLong(f.substring(0, f.indexOf('/')));
        }
        if (elements != keys.size()) {
          extraRecords += Math.abs(elements - keys.size());
          examples.add(r + " holds " + elements + " records, the model " + keys.size());
        }
        for (String k : keys) {
          keysChecked++;
          List<Model.Ack> acks = model.acks(k, members);
          ReplicaRecord w = Model.winner(acks, spec);
          Observed o = seen.get(k);
          if (Model.compare(o, w, spec) != 0) {
            mismatches++;
            if (examples.size() < 5) {
              examples.add(
                  r
                      + " key "
                      + KeyCodec.encode(Model.keyBytes(k))
                      + ": has "
                      + describe(o)
                      + ", model "
                      + describe(w));
            }
          }
          if (w.tombstone() && o != null && !o.tombstone()) {
            resurrected++;
          }
          for (Model.Ack a : acks) {
            if (Model.compare(o, a.record(), spec) < 0) {
              lost++;
            }
          }
        }
      }
    }
    String ex5 = examples.isEmpty() ? "" : "; e.g. " + String.join("; ", examples);
    if (ex.model()) {
      checks.add(
          new Check(
              "final state equals the model",
              mismatches == 0 && extraRecords == 0,
              keysChecked
                  + " replica-keys checked, "
                  + mismatches
                  + " differ, "
                  + extraRecords
                  + " records unexplained"
                  + ex5));
    }
    if (ex.noLoss()) {
      checks.add(
          new Check(
              "no acknowledged write lost",
              lost == 0,
              model.acks()
                  + " acknowledged writes, "
                  + lost
                  + " lost (final state older than the write)"));
    }
    if (ex.noResurrection()) {
      checks.add(
          new Check(
              "no deleted key resurrected",
              resurrected == 0,
              resurrected + " deleted keys live again"));
    }
  }

  private static String describe(Observed o) {
    if (o == null) {
      return "nothing";
    }
    return (o.tombstone() ? "tombstone" : o.value().length + "B")
        + "@"
        + ReplicaRecord.describeVersion(o.version())
        + "/"
        + Long.toHexString(o.origin());
  }

  private static String describe(ReplicaRecord r) {
    return (r.tombstone() ? "tombstone" : r.value().length + "B")
        + "@"
        + ReplicaRecord.describeVersion(r.version())
        + "/"
        + Long.toHexString(r.origin());
  }
}
