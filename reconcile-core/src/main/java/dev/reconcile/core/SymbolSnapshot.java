package dev.reconcile.core;

import java.util.ArrayList;
import java.util.List;

/**
 * The coded symbols a rateless stream is sent from or decoded against: the sum of its partitions'
 * maintained prefixes ({@link CodedSymbols}, {@code M = 2^ratelessLog2} symbols each) as of each
 * partition's snapshot instant, copied <b>as the stream reaches them</b> rather than all at once.
 *
 * <h2>Why</h2>
 *
 * A round at {@code d = 1 000} streams about {@code 1.35 d + 2 sqrt d}, some 1 400 symbols, of a
 * prefix of {@code M = 2^14} per partition; copying every partition's whole prefix when the stream
 * starts read and wrote 16 x 256 KiB on each side of a 16-partition round, about a third of a dry
 * round's session on the two-core bench machine (docs/benchmarks.md, section 2, "stop 35"). Here
 * the stream pays for the symbols it reads, {@code O(d)}, as the rest of the round does.
 *
 * <h2>How it stays a snapshot</h2>
 *
 * A member partition joins ({@link #owe}) at its instant, under the store's lock, together with the
 * fingerprint of that instant; it copies nothing yet. From then on the member owes the symbols from
 * some index up: {@link #ensure}{@code (to)} has each member add its live symbols up to {@code to}
 * ({@link Member#extend}), which are still those of its instant as long as nothing has changed
 * them; and before anything changes them, the store has the member add all it still owes (up to
 * {@code M}) and forget the snapshot: copy on write, the copy paid once per partition and snapshot
 * by the first write after the instant. A store that cannot do this adds a whole prefix at once
 * ({@link #addAll}).
 *
 * <h2>Threads</h2>
 *
 * One session thread owns the snapshot: it calls {@link #owe}, {@link #ensure}, {@link #release}
 * and reads symbols {@code [0, ready)} ({@link #symbols}). Members add to the sum from any thread
 * ({@link #addRange}, under the sum's monitor), holding their own lock, which {@link #ensure} never
 * holds while it takes the sum's: no cycle. A member's later adds only reach indices at or past
 * what it has added, which {@link #ensure} has not yet made ready, so they never touch what the
 * session reads; {@link #ensure} ends under the sum's monitor, so every add before it is visible.
 */
public final class SymbolSnapshot {
  /** A partition of the store that owes this snapshot its symbols past some index. */
  public interface Member {
    /**
     * Adds the partition's symbols from where it has got to up to {@code to} ({@link #addRange}),
     * as of its instant: unchanged since, or already added in full.
     */
    void extend(int to);

    /** The snapshot is no longer read: stop owing it anything. */
    void release();
  }

  private final CodedSymbols sum;
  private final List<Member> owed = new ArrayList<>();
  private int ready;
  private boolean released;

  /** An empty sum of prefixes of {@code 2^log2} symbols. */
  public SymbolSnapshot(HashSpec spec, int log2) {
    this.sum = new CodedSymbols(spec, log2);
  }

  /** A snapshot complete at once: a copy of {@code symbols}. */
  public static SymbolSnapshot of(CodedSymbols symbols) {
    SymbolSnapshot s = new SymbolSnapshot(symbols.spec(), symbols.log2());
    s.addAll(symbols);
    return s;
  }

  /** {@code M}, the symbols of each prefix and of the sum. */
  public int size() {
    return sum.size();
  }

  /** Adds a whole prefix as it is now (a member read at once). */
  public void addAll(CodedSymbols prefix) {
    addRange(prefix, 0, sum.size());
  }

  /** Adds symbols {@code [from, to)} of {@code prefix}: a member's part, from any thread. */
  public void addRange(CodedSymbols prefix, int from, int to) {
    synchronized (sum) {
      sum.addRange(prefix, from, to);
    }
  }

  /**
   * A member joins at its instant, owing all its symbols. Only before the first {@link #ensure}: a
   * member owes from index 0.
   */
  public void owe(Member m) {
    if (ready > 0) {
      throw new IllegalStateException("a member joins a snapshot before any symbol is read");
    }
    owed.add(m);
  }

  /** Makes symbols {@code [0, min(to, M))} of the sum final, to be read ({@link #symbols}). */
  public void ensure(int to) {
    if (released) {
      throw new IllegalStateException("symbols read from a released snapshot");
    }
    int upTo = Math.min(to, sum.size());
    if (upTo <= ready) {
      return;
    }
    for (Member m : owed) {
      m.extend(upTo);
    }
    synchronized (sum) {
      ready = upTo;
    }
  }

  /** Symbols {@code [0, ready)} are final. */
  public int ready() {
    return ready;
  }

  /** The members owe nothing more: the snapshot is no longer read. Idempotent. */
  public void release() {
    released = true;
    RuntimeException first = null;
    for (Member m : owed) {
      first = Releases.run(m::release, first);
    }
    owed.clear();
    Releases.rethrow(first);
  }

  /** A copy of the whole sum ({@link #ensure}{@code (M)} first). */
  public CodedSymbols copy() {
    ensure(sum.size());
    synchronized (sum) {
      return sum.copy();
    }
  }

  /** The sum, of which only symbols {@code [0, ready)} may be read. */
  CodedSymbols symbols() {
    return sum;
  }
}
