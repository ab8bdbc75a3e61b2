package dev.reconcile.cli.replay;

import dev.reconcile.agent.KeyCodec;
import dev.reconcile.cli.replay.ScenarioReport.Check;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.ReplicaRecord;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The last phase of a run: every readable replica passes its self-check, and on every replica of
 * every group each key the group wrote is compared with the {@link Model}: the final state equals
 * the model's winner (and the replica holds no record the model does not explain), no acknowledged
 * write is newer than what the replica holds (lost), no deleted key is live again.
 */
final class Verifier {
  private final RunContext ctx;
  private long mismatches;
  private long lost;
  private long resurrected;
  private long extraRecords;
  private long keysChecked;
  private final List<String> examples = new ArrayList<>();

  Verifier(RunContext ctx) {
    this.ctx = ctx;
  }

  void run() throws Exception {
    for (String r : ctx.names) {
      if (ctx.readable(r) && !ctx.cluster.selfCheck(r)) {
        ctx.checks.add(
            new Check("selfcheck " + r, false, "maintained sketches differ from a scan"));
      }
    }
    for (List<String> group : ctx.s.expect().groups()) {
      verifyGroup(group);
    }
    record();
  }

  private void verifyGroup(List<String> group) throws Exception {
    Set<String> members = new HashSet<>(group);
    HashSpec spec = ctx.specs.get(group.get(0));
    List<String> keys = ctx.model.keys(members);
    for (String r : group) {
      if (!ctx.readable(r)) {
        ctx.checks.add(
            new Check("replica " + r, false, "down or paused at the end: nothing to verify"));
        continue;
      }
      Map<String, Observed> seen = ctx.cluster.read(r, keys);
      long elements = 0;
      for (String f : ctx.cluster.fingerprints(r)) {
        elements += Long.parseLong(f.substring(0, f.indexOf('/')));
      }
      if (elements != keys.size()) {
        extraRecords += Math.abs(elements - keys.size());
        examples.add(r + " holds " + elements + " records, the model " + keys.size());
      }
      for (String k : keys) {
        keysChecked++;
        List<Model.Write> writes = ctx.model.writes(k, members);
        Model.Write w = Model.winner(writes, spec);
        Observed o = seen.get(k);
        if (!Model.matches(o, w, spec)) {
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
        lost += Model.lost(o, writes, spec);
      }
    }
  }

  private void record() {
    var ex = ctx.s.expect();
    String ex5 = examples.isEmpty() ? "" : "; e.g. " + String.join("; ", examples);
    if (ex.model()) {
      ctx.checks.add(
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
      ctx.checks.add(
          new Check(
              "no acknowledged write lost",
              lost == 0,
              ctx.model.acks()
                  + " acknowledged writes, "
                  + lost
                  + " lost (final state older than the write)"));
    }
    if (ex.noResurrection()) {
      ctx.checks.add(
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
    return describe(o.tombstone(), o.value().length, o.version(), o.origin());
  }

  private static String describe(Model.Write w) {
    return describe(w.tombstone(), w.value().length, w.version(), w.origin());
  }

  private static String describe(boolean tombstone, int valueBytes, long version, long origin) {
    return (tombstone ? "tombstone" : valueBytes + "B")
        + "@"
        + ReplicaRecord.describeVersion(version)
        + "/"
        + Long.toHexString(origin);
  }
}
