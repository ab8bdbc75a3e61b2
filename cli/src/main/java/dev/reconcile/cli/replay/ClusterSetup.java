package dev.reconcile.cli.replay;

import dev.reconcile.agent.AgentConfig;
import dev.reconcile.agent.KeyCodec;
import dev.reconcile.agent.LocalReplica;
import dev.reconcile.agent.ReplicaAgent;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.estimator.EstimatorKinds;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * The first phase of a run: one {@link FaultProxy} per directed link, each replica's data directory
 * seeded (from-dirs copied, generated and file records written straight into the store, all
 * acknowledged in the model), then the agents started with their configuration and test hooks.
 */
final class ClusterSetup {
  private final RunContext ctx;

  /** Version of the first seeded record: two minutes in the past, the same for every replica. */
  private final long seedBase = (System.currentTimeMillis() - 120_000) << 16;

  ClusterSetup(RunContext ctx) {
    this.ctx = ctx;
  }

  void run() throws Exception {
    Scenario s = ctx.s;
    List<String> names = ctx.names;
    Files.createDirectories(ctx.runDir);
    for (String x : names) {
      for (String y : names) {
        if (!x.equals(y)) {
          String l = RunContext.link(x, y);
          ctx.proxies.put(l, new FaultProxy(l, () -> ctx.cluster.peerAddress(y)));
        }
      }
    }
    var g = s.initial().generate();
    if (g != null) {
      ctx.gen = new KeyGen(g.seed(), g.keySize());
      ctx.valueSize = g.valueSize();
      ctx.fresh.set(g.n());
    }
    Map<String, Map<String, String>> configs = new java.util.LinkedHashMap<>();
    for (String name : names) {
      Path data = ctx.runDir.resolve(name).resolve("data");
      Map<String, String> c = ScenarioRunner.agentConfig(s, name, data);
      if (s.background() != null) {
        c.put("repair-interval", s.background().interval().toMillis() + "ms");
        c.put("peers", String.join(",", backgroundPeers(name)));
      }
      configs.put(name, c);
      AgentConfig ac = AgentConfig.fromMap(c);
      ctx.specs.put(name, ReplicaAgent.sketchParams(ac, EstimatorKinds.defaults()).spec());
      seed(name, ac, data);
    }
    for (int i = 0; i < names.size(); i++) {
      String name = names.get(i);
      ctx.cluster.start(name, i, configs.get(name), ScenarioRunner.hooks(s, name));
    }
    ctx.say(
        "%d replicas up (%s), %d initial records",
        names.size(), ctx.cluster.mode(), ctx.initialRecords);
  }

  /** The proxies {@code name}'s background rounds go through. */
  private LinkedHashSet<String> backgroundPeers(String name) {
    LinkedHashSet<String> peers = new LinkedHashSet<>();
    for (String[] pair : ScenarioRunner.pairs(ctx.names, ctx.s.background().via())) {
      String other = pair[0].equals(name) ? pair[1] : pair[1].equals(name) ? pair[0] : null;
      if (other != null) {
        InetSocketAddress a = ctx.proxies.get(RunContext.link(name, other)).address();
        peers.add(a.getHostString() + ":" + a.getPort());
      }
    }
    return peers;
  }

  /**
   * Copies from-dirs, writes generated and file records straight into the store, acknowledging them
   * in the model.
   */
  private void seed(String name, AgentConfig ac, Path data) throws IOException {
    Scenario s = ctx.s;
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
            ReplicaRecord.of(
                ctx.gen.key(i),
                ctx.gen.value(i, 0, g.valueSize()),
                base + i,
                ScenarioRunner.SEED_ORIGIN));
      }
    }
    Path file = s.initial().files().get(name);
    if (file != null) {
      records.addAll(readTsv(name, file, base + (1L << 32)));
    }
    if (from == null && records.isEmpty()) {
      return;
    }
    try (LocalReplica store = LocalReplica.open(ac)) {
      if (from != null) {
        store.forEachRecord(r -> ack(name, r));
        ctx.initialRecords += store.recordCount();
      }
      for (int i = 0; i < records.size(); i += 10_000) {
        store.records().apply(records.subList(i, Math.min(records.size(), i + 10_000)));
      }
    } catch (RuntimeException e) {
      throw new ScenarioException(
          "scenario " + s.file() + ": initial data of " + name + ": " + e.getMessage(), e);
    }
    for (ReplicaRecord r : records) {
      ack(name, r);
    }
    ctx.initialRecords += records.size();
  }

  private void ack(String replica, ReplicaRecord r) {
    if (r.tombstone()) {
      ctx.model.ackDelete(replica, r.key(), r.version(), r.origin());
    } else {
      ctx.model.ack(replica, r.key(), r.value(), r.version(), r.origin());
    }
  }

  /** Lines {@code KEY<TAB>VALUE} (percent-encoded), versions from {@code base + line number}. */
  private List<ReplicaRecord> readTsv(String name, Path file, long base) throws IOException {
    List<ReplicaRecord> out = new ArrayList<>();
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
        out.add(ReplicaRecord.of(k, v, base + line, ScenarioRunner.SEED_ORIGIN));
      } catch (IllegalArgumentException e) {
        throw new ScenarioException(
            "scenario "
                + ctx.s.file()
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
    return out;
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
}
