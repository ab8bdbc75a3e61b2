package dev.reconcile.cli.replay;

import dev.reconcile.core.ConflictRule;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.ReplicaRecord;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The runner's own model of the conflict rule: every acknowledged write (initial data included)
 * with the replica that acknowledged it and the version that replica returned. The expected state
 * of a key within a group of replicas is the maximum, under (version, origin, valueHash,
 * tombstone), of the writes acknowledged by the group's members; this is computed here
 * independently of the store's own apply path.
 */
final class Model {
  /** One acknowledged write. */
  record Ack(String replica, ReplicaRecord record) {}

  private final Map<String, List<Ack>> byKey = new HashMap<>();
  private long acks;

  synchronized void ack(String replica, ReplicaRecord r) {
    byKey.computeIfAbsent(keyString(r.key()), k -> new ArrayList<>(2)).add(new Ack(replica, r));
    acks++;
  }

  synchronized long acks() {
    return acks;
  }

  /** Keys acknowledged by any replica of {@code group}. */
  synchronized List<String> keys(Set<String> group) {
    List<String> out = new ArrayList<>();
    for (Map.Entry<String, List<Ack>> e : byKey.entrySet()) {
      for (Ack a : e.getValue()) {
        if (group.contains(a.replica())) {
          out.add(e.getKey());
          break;
        }
      }
    }
    return out;
  }

  /** The acknowledged writes of {@code key} made on members of {@code group}. */
  synchronized List<Ack> acks(String key, Set<String> group) {
    List<Ack> out = new ArrayList<>();
    for (Ack a : byKey.getOrDefault(key, List.of())) {
      if (group.contains(a.replica())) {
        out.add(a);
      }
    }
    return out;
  }

  /** The model's winner of {@code key} in {@code group}: the maximum under the conflict rule. */
  static ReplicaRecord winner(List<Ack> acks, HashSpec spec) {
    ReplicaRecord w = null;
    for (Ack a : acks) {
      if (w == null || ConflictRule.compare(a.record(), w, spec) > 0) {
        w = a.record();
      }
    }
    return w;
  }

  /**
   * Sign of {@code observed - r} under the conflict rule; an absent observation (HTTP reads show a
   * tombstone as absent) ranks as a tombstone at the same version when {@code r} is a tombstone,
   * below everything otherwise.
   */
  static int compare(Observed o, ReplicaRecord r, HashSpec spec) {
    if (o == null) {
      return r.tombstone() ? 0 : -1;
    }
    return ConflictRule.compare(
        new ReplicaRecord(
            r.key(), o.tombstone() ? null : o.value(), o.version(), o.origin(), o.tombstone()),
        r,
        spec);
  }

  static String keyString(byte[] key) {
    return new String(key, StandardCharsets.ISO_8859_1);
  }

  static byte[] keyBytes(String key) {
    return key.getBytes(StandardCharsets.ISO_8859_1);
  }
}
