package dev.reconcile.cli.replay;

import dev.reconcile.core.HashSpec;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The runner's oracle: every acknowledged write (initial data included) with the replica that
 * acknowledged it and the version that replica returned, and the last-writer-wins order written
 * here from its specification (docs/design.md, "Conflict rule"), not taken from the store: two
 * writes of a key compare by the tuple
 *
 * <pre>
 *   (version, origin, valueHash(value), tombstone ? 1 : 0)
 * </pre>
 *
 * lexicographically, each field an unsigned 64-bit number, the larger tuple winning; {@code
 * valueHash} is the cluster's keyed {@link HashSpec#valueHash} of the value (of no bytes for a
 * tombstone). The expected state of a key within a group of replicas is the largest write
 * acknowledged by the group's members.
 *
 * <p>A read that finds nothing ({@code null}) stands for "a tombstone or nothing": over HTTP a
 * tombstone reads as absent, and a purged tombstone leaves nothing. So an absent read equals the
 * model when the model's winner is a tombstone, and for the loss check it ranks as the largest
 * tombstone the group acknowledged (every write that tombstone superseded is not lost), or below
 * every write when the group deleted nothing.
 */
final class Model {
  /** One acknowledged write: a tombstone has an empty value. */
  record Write(
      String replica, byte[] key, byte[] value, long version, long origin, boolean tombstone) {}

  private static final byte[] NO_VALUE = new byte[0];

  private final Map<String, List<Write>> byKey = new HashMap<>();
  private long acks;

  /** Records a write {@code replica} acknowledged. */
  synchronized void ack(String replica, byte[] key, byte[] value, long version, long origin) {
    add(new Write(replica, key, value, version, origin, false));
  }

  /** Records a delete (a tombstone) {@code replica} acknowledged. */
  synchronized void ackDelete(String replica, byte[] key, long version, long origin) {
    add(new Write(replica, key, NO_VALUE, version, origin, true));
  }

  private void add(Write w) {
    byKey.computeIfAbsent(keyString(w.key()), k -> new ArrayList<>(2)).add(w);
    acks++;
  }

  synchronized long acks() {
    return acks;
  }

  /** Keys acknowledged by any replica of {@code group}. */
  synchronized List<String> keys(Set<String> group) {
    List<String> out = new ArrayList<>();
    for (Map.Entry<String, List<Write>> e : byKey.entrySet()) {
      for (Write w : e.getValue()) {
        if (group.contains(w.replica())) {
          out.add(e.getKey());
          break;
        }
      }
    }
    return out;
  }

  /** The acknowledged writes of {@code key} made on members of {@code group}. */
  synchronized List<Write> writes(String key, Set<String> group) {
    List<Write> out = new ArrayList<>();
    for (Write w : byKey.getOrDefault(key, List.of())) {
      if (group.contains(w.replica())) {
        out.add(w);
      }
    }
    return out;
  }

  /** Sign of {@code a - b} in the last-writer-wins order (0: the same write). */
  static int order(
      long versionA,
      long originA,
      byte[] valueA,
      boolean tombA,
      long versionB,
      long originB,
      byte[] valueB,
      boolean tombB,
      HashSpec spec) {
    int c = Long.compareUnsigned(versionA, versionB);
    if (c == 0) {
      c = Long.compareUnsigned(originA, originB);
    }
    if (c == 0) {
      c =
          Long.compareUnsigned(
              spec.valueHash(tombA ? NO_VALUE : valueA), spec.valueHash(tombB ? NO_VALUE : valueB));
    }
    if (c == 0) {
      c = Integer.compare(tombA ? 1 : 0, tombB ? 1 : 0);
    }
    return Integer.signum(c);
  }

  static int order(Write a, Write b, HashSpec spec) {
    return order(
        a.version(),
        a.origin(),
        a.value(),
        a.tombstone(),
        b.version(),
        b.origin(),
        b.value(),
        b.tombstone(),
        spec);
  }

  /** The model's winner among {@code writes} (null for none). */
  static Write winner(List<Write> writes, HashSpec spec) {
    Write w = null;
    for (Write x : writes) {
      if (w == null || order(x, w, spec) > 0) {
        w = x;
      }
    }
    return w;
  }

  /** The largest tombstone among {@code writes}, which an absent read stands for (null: none). */
  static Write largestTombstone(List<Write> writes, HashSpec spec) {
    Write t = null;
    for (Write x : writes) {
      if (x.tombstone() && (t == null || order(x, t, spec) > 0)) {
        t = x;
      }
    }
    return t;
  }

  /** Sign of {@code observed - w} in the order; {@code observed} is not null. */
  static int compare(Observed o, Write w, HashSpec spec) {
    return order(
        o.version(),
        o.origin(),
        o.value(),
        o.tombstone(),
        w.version(),
        w.origin(),
        w.value(),
        w.tombstone(),
        spec);
  }

  /** True when what a replica holds ({@code o}, null: nothing read) is the model's winner. */
  static boolean matches(Observed o, Write winner, HashSpec spec) {
    return o == null ? winner.tombstone() : compare(o, winner, spec) == 0;
  }

  /**
   * The acknowledged writes in {@code writes} that what the replica holds ({@code o}) is older
   * than: those writes are lost.
   */
  static long lost(Observed o, List<Write> writes, HashSpec spec) {
    Write absentAs = o == null ? largestTombstone(writes, spec) : null;
    long n = 0;
    for (Write w : writes) {
      int c;
      if (o != null) {
        c = compare(o, w, spec);
      } else {
        c = absentAs == null ? -1 : order(absentAs, w, spec);
      }
      if (c < 0) {
        n++;
      }
    }
    return n;
  }

  static String keyString(byte[] key) {
    return new String(key, StandardCharsets.ISO_8859_1);
  }

  static byte[] keyBytes(String key) {
    return key.getBytes(StandardCharsets.ISO_8859_1);
  }
}
