package dev.reconcile.core;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Incremental decoder of a stream of the peer's coded symbols against the local prefix: the
 * receiving side of the rateless mode (Yang, Gilad and Alizadeh [1], section 4).
 *
 * <h2>Decoding</h2>
 *
 * The peer's symbols arrive in consecutive ranges {@code [0, r1), [r1, r2), ...} ({@link
 * #receive}). Each arriving symbol {@code i} becomes a <em>difference symbol</em> (local minus
 * remote: element and check sums XORed, counts subtracted modulo {@code 2^16}), which holds only
 * the elements of the symmetric difference: {@code +1} for those only here, {@code -1} for those
 * only there. Then
 *
 * <ol>
 *   <li>every element already recovered whose sequence contains {@code i} is removed from it (each
 *       recovered element keeps its index stream state and its next index, bucketed by that index,
 *       so a correction costs O(1) and nothing is rescanned);
 *   <li>pure symbols are peeled: a symbol is <em>pure</em> when its count is {@code +-1}, its check
 *       sum equals the low 32 bits of {@code checkHash(sum)}, and the index sequence of {@code sum}
 *       really contains {@code i}. The element is recorded and removed from every received symbol
 *       of its sequence, which may make others pure (an explicit {@code int} stack, as in {@link
 *       Iblt#peel});
 *   <li>the decode is <em>complete</em> when difference symbol 0, which contains every element of
 *       the difference, is zero in all three sums. A false stop needs a 96-bit coincidence of
 *       element and check sums; the decoder then also checks that every received symbol is zero,
 *       and every symbol received later must arrive zero after the corrections, or the decoder
 *       fails (the peer's symbols are inconsistent).
 * </ol>
 *
 * Lists ({@link #onlyHere()}, {@link #onlyThere()}) are available only once complete: a partial
 * peel is never exposed.
 *
 * <h2>Bounds on hostile input</h2>
 *
 * A genuine difference never yields more elements than symbols received (each extraction empties
 * the pure symbol it came from, which no later extraction touches again), so extraction stops with
 * a failure at that cap; each extraction walks one index sequence (about {@code 2 ln r} indices)
 * and pushes at most that many candidates. Nothing is allocated beyond {@code O(r)} for {@code r}
 * symbols actually received, and never beyond the local prefix size {@code M}: ranges are validated
 * ({@link PackedSymbols#symbolCount}) before anything is read. When {@code M} symbols have arrived
 * without completing, {@link #exhausted()} says so and the protocol falls back.
 *
 * <h2>Memory layout</h2>
 *
 * Difference symbols interleaved as in {@link CodedSymbols} ({@code long[2r]}, grown by doubling up
 * to {@code M}); recovered elements in parallel primitive arrays (element, stream state, next
 * index, bucket link, check, sign); one bucket head per symbol index below the capacity and one
 * chain for elements whose next index lies beyond it; the raw 16-bit count differences of received
 * symbols ({@code short[]}, read by {@link RatelessPacing}).
 *
 * <p>[1] L. Yang, Y. Gilad, M. Alizadeh, "Practical Rateless Set Reconciliation", ACM SIGCOMM 2024.
 *
 * <p>Not thread-safe. The local prefix must not change while the decoder uses it: decode against a
 * {@link CodedSymbols#copy()} taken when the session starts, or a {@link SymbolSnapshot}.
 */
public final class RatelessDecoder {
  private static final int NONE = -1;

  private final HashSpec spec;
  private final long[] local;
  private final int limit;
  private final SymbolSnapshot snapshot; // null: local is complete

  private long[] w = new long[0];
  private short[] raw = new short[0];
  private int[] head = new int[0];
  private int cap;
  private int received;
  private int far = NONE;

  private long[] elems = new long[16];
  private long[] states = new long[16];
  private int[] nextIndex = new int[16];
  private int[] link = new int[16];
  private int[] checks = new int[16];
  private byte[] signs = new byte[16];
  private int recovered;
  private int recoveredHere;

  private final IntStack stack = new IntStack(64);
  private int[] scratch = new int[64];

  private boolean complete;
  private String failure;

  /**
   * A decoder of the peer's symbols against {@code local} (read, never written; must stay unchanged
   * while decoding). It accepts at most {@code local.size()} symbols.
   */
  public RatelessDecoder(CodedSymbols local) {
    this.spec = local.spec();
    this.local = local.words();
    this.limit = local.size();
    this.snapshot = null;
  }

  /**
   * A decoder against {@code local}, whose symbols it makes ready ({@link SymbolSnapshot#ensure})
   * as the peer's arrive: a stream reads {@code O(r)} of the local prefix for {@code r} symbols
   * received, not all {@code M}.
   */
  public RatelessDecoder(SymbolSnapshot local) {
    CodedSymbols sum = local.symbols();
    this.spec = sum.spec();
    this.local = sum.words();
    this.limit = sum.size();
    this.snapshot = local;
  }

  /** The local snapshot is no longer read (see {@link SymbolSnapshot#release}); idempotent. */
  public void release() {
    if (snapshot != null) {
      snapshot.release();
    }
  }

  /** {@link #receive(int, ByteBuffer)} of a whole array. */
  public void receive(int from, byte[] packed) throws FormatException {
    receive(from, ByteBuffer.wrap(packed));
  }

  /**
   * Adds the peer's symbols {@code [from, from + n)} packed in {@code packed}'s remaining bytes
   * ({@link PackedSymbols}), consuming them, and peels as far as they allow. {@code from} must be
   * the number of symbols received so far and the range must end within the local prefix.
   *
   * @throws FormatException when the range is malformed (nothing is read; the decoder is unchanged)
   *     or when the symbols prove inconsistent or hostile (the decoder has then {@link #failed()})
   * @throws IllegalStateException after the decoder has failed
   */
  public void receive(int from, ByteBuffer packed) throws FormatException {
    if (failure != null) {
      throw new IllegalStateException("rateless decode already failed: " + failure);
    }
    int n = PackedSymbols.symbolCount(from, packed, received, limit);
    int to = from + n;
    ensureCapacity(to);
    if (snapshot != null) {
      snapshot.ensure(to);
    }
    ByteBuffer b = packed.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    long[] w = this.w;
    long[] local = this.local;
    for (int i = from; i < to; i++) {
      int k = i << 1;
      long sum = b.getLong();
      int chk = b.getInt();
      short cnt = b.getShort();
      long mine = local[k + 1];
      short dc = (short) ((int) (mine >> 32) - cnt);
      raw[i] = dc;
      w[k] = local[k] ^ sum;
      w[k + 1] = ((long) dc << 32) | ((mine ^ chk) & CodedSymbols.CHECK_MASK);
    }
    packed.position(packed.limit());
    received = to;
    for (int i = from; i < to; i++) {
      correct(i);
      if (!complete && isCandidate(w[(i << 1) + 1])) {
        stack.push(i);
      }
    }
    if (complete) {
      requireZero(from, to, "after completion");
      return;
    }
    peel();
    if (w[0] == 0 && w[1] << 16 == 0) {
      requireZero(0, received, "when symbol 0 emptied");
      complete = true;
    }
  }

  /** Symbols received so far (the next range must start here). */
  public int received() {
    return received;
  }

  /** The most symbols this decoder accepts: the local prefix size {@code M}. */
  public int limit() {
    return limit;
  }

  /** True once every difference has been recovered (difference symbol 0 is zero). */
  public boolean complete() {
    return complete;
  }

  /** True when all {@code M} symbols arrived without completing: fall back to another mode. */
  public boolean exhausted() {
    return !complete && failure == null && received == limit;
  }

  /** True when the symbols proved inconsistent or hostile; {@link #failure()} says how. */
  public boolean failed() {
    return failure != null;
  }

  /** Why the decode failed, or null. */
  public String failure() {
    return failure;
  }

  /** Elements recovered so far (a progress figure; the elements are final only when complete). */
  public int recovered() {
    return recovered;
  }

  /** The elements only in the local set, in recovery order. Only when {@link #complete()}. */
  public long[] onlyHere() {
    return list(1, recoveredHere);
  }

  /** The elements only in the peer's set, in recovery order. Only when {@link #complete()}. */
  public long[] onlyThere() {
    return list(-1, recovered - recoveredHere);
  }

  /**
   * The count difference (local minus remote, 16 bits) of received symbol {@code i}, as received.
   */
  int rawCountDifference(int i) {
    if (i >= received) {
      throw new IndexOutOfBoundsException(i + " >= " + received);
    }
    return raw[i];
  }

  private long[] list(int sign, int n) {
    if (!complete) {
      throw new IllegalStateException(
          "rateless decode is not complete ("
              + recovered
              + " elements recovered from "
              + received
              + " symbols): a partial decode must not be used");
    }
    long[] out = new long[n];
    int k = 0;
    for (int e = 0; e < recovered; e++) {
      if (signs[e] == sign) {
        out[k++] = elems[e];
      }
    }
    return out;
  }

  /**
   * Removes from symbol {@code i} every recovered element scheduled there, and reschedules them.
   */
  private void correct(int i) {
    int e = head[i];
    if (e == NONE) {
      return;
    }
    head[i] = NONE;
    long[] w = this.w;
    int k = i << 1;
    long sum = w[k];
    long v = w[k + 1];
    while (e != NONE) {
      int following = link[e];
      sum ^= elems[e];
      v = (v - ((long) signs[e] << 32)) ^ (checks[e] & CodedSymbols.CHECK_MASK);
      long s = states[e] + HashSpec.RATELESS_GAMMA;
      states[e] = s;
      int j = HashSpec.nextRatelessIndex(i, HashSpec.mix13(s));
      nextIndex[e] = j;
      schedule(e, j);
      e = following;
    }
    w[k] = sum;
    w[k + 1] = v;
  }

  private void schedule(int e, int j) {
    if (j >= limit) {
      return; // no symbol at or beyond the prefix will ever arrive
    }
    if (j < cap) {
      link[e] = head[j];
      head[j] = e;
    } else {
      link[e] = far;
      far = e;
    }
  }

  private void peel() throws FormatException {
    long[] w = this.w;
    IntStack stack = this.stack;
    while (stack.size() > 0) {
      int i = stack.pop();
      int k = i << 1;
      long v = w[k + 1];
      if (!isCandidate(v)) {
        continue;
      }
      long x = w[k];
      long c = spec.cellBase(x);
      if ((int) c != (int) v) {
        continue;
      }
      // Is i really in x's sequence? Collect x's indices below i on the way.
      long s = HashSpec.ratelessStart(c);
      int j = 0;
      int below = 0;
      while (j < i) {
        if (below == scratch.length) {
          scratch = Arrays.copyOf(scratch, 2 * below);
        }
        scratch[below++] = j;
        s += HashSpec.RATELESS_GAMMA;
        j = HashSpec.nextRatelessIndex(j, HashSpec.mix13(s));
      }
      if (j != i) {
        continue; // the sum of a mixed symbol that passed the count and check tests
      }
      if (recovered >= received) {
        fail(
            "more than "
                + received
                + " elements peeled from "
                + received
                + " symbols: the symbols are corrupt or hostile");
      }
      int sign = (short) (v >> 32);
      long chk = c & CodedSymbols.CHECK_MASK;
      long dc = (long) sign << 32;
      for (int t = 0; t < below; t++) {
        remove(scratch[t], x, dc, chk);
      }
      remove(i, x, dc, chk);
      int end = received;
      while (true) {
        s += HashSpec.RATELESS_GAMMA;
        j = HashSpec.nextRatelessIndex(j, HashSpec.mix13(s));
        if (j >= end) {
          break;
        }
        remove(j, x, dc, chk);
      }
      record(x, s, j, (int) c, sign);
    }
  }

  private void remove(int i, long x, long dc, long chk) {
    int k = i << 1;
    w[k] ^= x;
    long v = (w[k + 1] - dc) ^ chk;
    w[k + 1] = v;
    if (isCandidate(v)) {
      stack.push(i);
    }
  }

  private void record(long x, long state, int next, int check, int sign) {
    int e = recovered;
    if (e == elems.length) {
      int n = 2 * e;
      elems = Arrays.copyOf(elems, n);
      states = Arrays.copyOf(states, n);
      nextIndex = Arrays.copyOf(nextIndex, n);
      link = Arrays.copyOf(link, n);
      checks = Arrays.copyOf(checks, n);
      signs = Arrays.copyOf(signs, n);
    }
    elems[e] = x;
    states[e] = state;
    nextIndex[e] = next;
    checks[e] = check;
    signs[e] = (byte) sign;
    recovered = e + 1;
    if (sign > 0) {
      recoveredHere++;
    }
    schedule(e, next);
  }

  /** Count (16-bit) is +1 or -1. */
  private static boolean isCandidate(long v) {
    int c = (short) (v >> 32);
    return c == 1 || c == -1;
  }

  private void requireZero(int from, int to, String when) throws FormatException {
    long[] w = this.w;
    for (int i = from; i < to; i++) {
      int k = i << 1;
      if (w[k] != 0 || w[k + 1] << 16 != 0) {
        fail(
            "difference symbol "
                + i
                + " is not zero "
                + when
                + ": the peer's symbols are inconsistent");
      }
    }
  }

  private void fail(String why) throws FormatException {
    failure = why;
    complete = false;
    throw new FormatException(why);
  }

  private void ensureCapacity(int to) {
    if (to <= cap) {
      return;
    }
    int n = Math.max(64, cap);
    while (n < to) {
      n <<= 1;
    }
    n = Math.min(n, limit);
    w = Arrays.copyOf(w, 2 * n);
    raw = Arrays.copyOf(raw, n);
    head = Arrays.copyOf(head, n);
    Arrays.fill(head, cap, n, NONE);
    cap = n;
    int e = far;
    far = NONE;
    while (e != NONE) {
      int following = link[e];
      schedule(e, nextIndex[e]);
      e = following;
    }
  }
}
