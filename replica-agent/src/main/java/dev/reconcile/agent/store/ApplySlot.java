package dev.reconcile.agent.store;

import dev.reconcile.agent.store.RecordCodec.Stored;
import dev.reconcile.core.ApplyOutcome;
import dev.reconcile.core.ConflictRule;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * One key's state while {@link RecordWriter} applies a batch: its row, the record stored under it
 * (read under the writer lock), and the winner the {@link ConflictRule} picks among that record and
 * the batch's entries of the key. A batch's slots are made outside the lock, one per distinct key,
 * in the order of their rows ({@link #inRowOrder}); a batch of more keys than a slice holds is
 * applied slice by slice ({@link #entriesBySlice}), each slice resolved ({@link #resolve}) and
 * written under the lock.
 */
final class ApplySlot {
  /** Slots in the order of their rows in the records column family ({@link RecordKeys}). */
  private static final Comparator<ApplySlot> BY_ROW =
      (a, b) -> Arrays.compareUnsigned(a.row, b.row);

  /**
   * Slots in the order of the digest row each writes ({@link DigestKeys}: partition, element
   * unsigned, key), or deletes when its winner is not stored.
   */
  static final Comparator<ApplySlot> BY_DIGEST_ROW =
      (a, b) -> {
        int c = Integer.compare(a.partition, b.partition);
        if (c == 0) {
          c = Long.compareUnsigned(a.digestElement(), b.digestElement());
        }
        return c != 0 ? c : Arrays.compareUnsigned(a.key, b.key);
      };

  final byte[] key;
  final long keyHash;
  final int partition;

  /** The key's row in the records column family. */
  final byte[] row;

  /** The first entry of the batch with this key. */
  final int entry;

  Stored original;
  long originalElement;

  /** The slice of the batch this key is applied in ({@link StoreOptions#applySliceKeys}). */
  int slice;

  /** The index of the winning incoming entry; -1 while the stored record (if any) wins. */
  int winner = -1;

  long wVersion;
  long wOrigin;
  long wValueHash;
  boolean wTombstone;
  boolean changed;

  /** The winner is a tombstone past the grace period: the key ends absent. */
  boolean wExpired;

  /** The winner's element (a changed slot whose winner is stored). */
  long newElement;

  private ApplySlot(byte[] key, long keyHash, int partition, int entry) {
    this.key = key;
    this.entry = entry;
    this.keyHash = keyHash;
    this.partition = partition;
    this.row = RecordKeys.of(partition, key);
  }

  long digestElement() {
    return wExpired ? originalElement : newElement;
  }

  /** The key is stored as {@code cur}, whose element is {@code element}: the winner so far. */
  void stored(Stored cur, long element) {
    original = cur;
    originalElement = element;
    wVersion = cur.version;
    wOrigin = cur.origin;
    wValueHash = cur.valueHash;
    wTombstone = cur.tombstone;
  }

  /**
   * One slot per distinct key of {@code incoming}, in row order; fills {@code slotOf[i]} with entry
   * {@code i}'s slot. Hashing happens here, outside the writer lock. The entries are sorted by row
   * (a stable sort), so the entries of one key are adjacent and the first of them makes its slot.
   */
  static List<ApplySlot> inRowOrder(Incoming incoming, StoreDb s, ApplySlot[] slotOf) {
    int n = incoming.size();
    ApplySlot[] byRow = new ApplySlot[n];
    for (int i = 0; i < n; i++) {
      long kh = incoming.keyHash(i);
      byRow[i] = new ApplySlot(incoming.key(i), kh, s.partitionOf(kh), i);
    }
    Arrays.sort(byRow, BY_ROW);
    List<ApplySlot> slots = new ArrayList<>(n);
    ApplySlot last = null;
    for (ApplySlot slot : byRow) {
      if (last == null || !Arrays.equals(last.row, slot.row)) {
        slots.add(slot);
        last = slot;
      }
      slotOf[slot.entry] = last;
    }
    return slots;
  }

  /** The rows of {@code slots}, in their order. */
  static List<byte[]> rows(List<ApplySlot> slots) {
    List<byte[]> rows = new ArrayList<>(slots.size());
    for (ApplySlot slot : slots) {
      rows.add(slot.row);
    }
    return rows;
  }

  /**
   * Puts the slots ({@code slots}, in row order) in slices of {@code sliceKeys} consecutive ones
   * and returns the batch's entries slice by slice, each slice's in the batch's order: the entries
   * of slice {@code c} are {@code order[start[c], start[c + 1])}, {@code start} (of one more
   * element than there are slices) filled here. {@code slotOf[i]} is entry {@code i}'s slot.
   */
  static int[] entriesBySlice(
      List<ApplySlot> slots, ApplySlot[] slotOf, int sliceKeys, int[] start) {
    int slices = start.length - 1;
    for (int j = 0; j < slots.size(); j++) {
      slots.get(j).slice = j / sliceKeys;
    }
    for (ApplySlot slot : slotOf) {
      start[slot.slice + 1]++;
    }
    for (int c = 0; c < slices; c++) {
      start[c + 1] += start[c];
    }
    int[] order = new int[slotOf.length];
    int[] next = Arrays.copyOf(start, slices);
    for (int i = 0; i < slotOf.length; i++) {
      order[next[slotOf[i].slice]++] = i;
    }
    return order;
  }

  /** The greatest version (unsigned) among the entries {@code order[from, to)}. */
  static long maxVersion(Incoming incoming, int[] order, int from, int to) {
    long maxVersion = 0;
    for (int k = from; k < to; k++) {
      int i = order == null ? k : order[k];
      if (Long.compareUnsigned(incoming.version(i), maxVersion) > 0) {
        maxVersion = incoming.version(i);
      }
    }
    return maxVersion;
  }

  /**
   * Runs the conflict rule over the entries {@code order[from, to)} (entries {@code [from, to)}
   * when {@code order} is null) in the batch's order, against their slots' current records (read by
   * {@link RecordWriter}): each slot ends with its winner. Tombstones older than {@code
   * graceCutoffMillis} are expired.
   */
  static ApplyOutcome resolve(
      Incoming incoming,
      ApplySlot[] slotOf,
      int[] order,
      int from,
      int to,
      long graceCutoffMillis) {
    int applied = 0;
    int stale = 0;
    int duplicate = 0;
    for (int k = from; k < to; k++) {
      int i = order == null ? k : order[k];
      ApplySlot slot = slotOf[i];
      long version = incoming.version(i);
      long origin = incoming.origin(i);
      long valueHash = incoming.valueHash(i);
      boolean tombstone = incoming.tombstone(i);
      boolean present = slot.original != null || slot.winner >= 0;
      int c =
          present
              ? ConflictRule.compare(
                  version,
                  origin,
                  valueHash,
                  tombstone,
                  slot.wVersion,
                  slot.wOrigin,
                  slot.wValueHash,
                  slot.wTombstone)
              : 1;
      boolean expired = tombstone && HybridClock.physicalMillis(version) < graceCutoffMillis;
      if (c > 0) {
        slot.winner = i;
        slot.wVersion = version;
        slot.wOrigin = origin;
        slot.wValueHash = valueHash;
        slot.wTombstone = tombstone;
        slot.wExpired = expired;
        slot.changed = true;
        if (expired && !present) {
          duplicate++; // nothing here to delete: the key is already as the tombstone leaves it
        } else {
          applied++;
        }
      } else if (c == 0) {
        duplicate++;
      } else {
        stale++;
      }
    }
    return new ApplyOutcome(applied, stale, duplicate);
  }
}
