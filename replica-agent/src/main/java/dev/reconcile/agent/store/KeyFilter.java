package dev.reconcile.agent.store;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An in-memory filter of the keys the store holds, by their key hash: {@link #mightContain} false
 * means the records family has no row for the key, so the conflict rule's read of the current
 * record can be skipped (a repair mostly brings keys the receiver lacks; the read of a lacking key
 * still costs RocksDB a memtable filter, a level walk and a table filter probe per file, through
 * JNI), and so can a client's read of the key. True means nothing: the key may be stored.
 *
 * <p><b>Structure.</b> A split block Bloom filter [1, 2] in segments. A segment is {@code 2^b}
 * blocks of 512 bits (eight {@code long} words, one cache line); a key hash {@code k} is mixed
 * ({@code h = fmix64(k)}, MurmurHash3's finalizer), its block is the top {@code b} bits of {@code
 * h}, and in each of the block's eight words it sets one bit, chosen by the top six bits of the low
 * 32 bits of {@code h} times an odd constant of that word (Apache Parquet's salts [2]). A query
 * reads one cache line a segment. With {@value #BITS_PER_KEY} bits a key at a segment's capacity
 * the false-positive rate is about 1 % (a word of 64 bits holds about 51 keys' bits, {@code (1 -
 * e^(-51/64))^8} = 0.85 %, raised by the spread of the blocks' loads [1]; measured 1.03 %), and
 * about 0.03 % at half of it; KeyFilterTest asserts at most 1.5 % and 0.1 %.
 *
 * <p><b>Growth without the keys.</b> A Bloom filter cannot be resized from its bits, and the keys
 * are in RocksDB. So a segment is never resized: when the newest one reaches its capacity, a new
 * segment of twice its blocks takes the next keys (a scalable Bloom filter [3], without its
 * tightening: a query's false-positive rate is at most the sum of the segments' rates, about 1 %
 * for each full segment, and the older, smaller segments are cache-resident). The first segment is
 * sized at open for twice the store's estimated keys, so a store that has not doubled since its
 * open has one segment. Purges leave their bits: a removed key becomes a false positive until the
 * filter is rebuilt from the digest index (one row a stored key).
 *
 * <p><b>Rebuilt into one segment.</b> When a segment is appended, or when the keys removed since
 * the last rebuild ({@link #removed}) are at least {@link #MIN_STALE_KEYS} and at least as many as
 * the keys stored (half the keys the filter holds are gone: a store that purged most of its
 * tombstones), the filter tells its {@link #onRebuildWanted} listener ({@link KeyFilterRebuild}),
 * which fills a new single segment, sized for twice the store's records, from the digest index at a
 * snapshot, and then puts it in the place of all segments: a query reads one cache line again, at
 * about 0.03 % false positives, and purged keys lose their bits. From {@link #beginRebuild} (under
 * the writer lock, no ingest in progress, the snapshot taken in the same hold) every {@link #add}
 * sets its key in the new segment too, so the new segment holds every key stored at the snapshot
 * (the scan's, {@link #addRebuilt}) and every key added since (the writers'); {@link
 * #finishRebuild} replaces the segment list in one volatile write. Every call that touches the new
 * segment runs under the writer lock.
 *
 * <p><b>Concurrency.</b> {@link #add} is called under the store's writer lock, and so is {@link
 * #mightContain} on the write path; a read of one key ({@code RecordReader.get}) calls {@link
 * #mightContain} without it, beside additions: {@link #segments} is volatile and set before any key
 * goes into a new segment, and a word's bits are only ever set, so a query sees every bit set
 * before the write that made its key visible (even a torn read of a word is a superset of the old
 * word). {@link #addAll} is for the rebuild at open, whose scanners share the filter before the
 * store is published and take its monitor a batch of a thousand keys at a time (with an atomic
 * update of eight words a key instead, the rebuild of 10^6 keys took 88-115 ms more than without
 * the filter; with batches, 16-64 ms). A key is added before the write that stores it, so a failed
 * write leaves at most a false positive, never a stored key the filter denies.
 *
 * <p>Memory: {@value #BITS_PER_KEY} bits (1.25 bytes) a key of capacity, at least {@value
 * #MIN_BLOCKS} blocks (64 KiB) a store; at most twice the keys' share after growth. All segments
 * together stay within a budget, an eighth of the heap by default: a filter at its budget keeps
 * filling its newest segment, its false positives rising, rather than throw an {@code
 * OutOfMemoryError} from a write under the writer lock.
 *
 * <p>[1] F. Putze, P. Sanders, J. Singler, "Cache-, Hash- and Space-Efficient Bloom Filters", WEA
 * 2007. [2] Apache Parquet, "Bloom Filter" (split block Bloom filter), parquet-format
 * BloomFilter.md. [3] P. S. Almeida, C. Baquero, N. Preguiça, D. Hutchison, "Scalable Bloom
 * Filters", Information Processing Letters 101(6), 2007.
 */
final class KeyFilter {
  /** Bits of filter a key of a segment's capacity. */
  static final int BITS_PER_KEY = 10;

  /** Blocks of the smallest segment: 64 KiB, about 52 000 keys. */
  static final int MIN_BLOCKS = 1 << 10;

  /** Blocks of the largest segment: 1 GiB; a store past it keeps filling its last segment. */
  static final int MAX_BLOCKS = 1 << 24;

  private static final int WORDS_PER_BLOCK = 8;
  private static final long BLOCK_BYTES = WORDS_PER_BLOCK * Long.BYTES;
  private static final int[] SALT = {
    0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31
  };

  /** Every segment, oldest first; replaced (never changed in place) when one is appended. */
  private volatile Segment[] segments;

  /** The segment keys are added to: the last of {@link #segments} (read and set by adders). */
  private Segment newest;

  /** The most memory all segments may take, in bytes. */
  private final long maxBytes;

  /** The segment a rebuild fills ({@link #beginRebuild}), or null; under the writer lock. */
  private Segment rebuilt;

  /**
   * Told when a rebuild is due: a segment appended (under the writer lock, or the open's scan's
   * monitor), or the removed keys as many as the stored ones (under the writer lock).
   */
  private Runnable onRebuildWanted = () -> {};

  /** A rebuild for removed keys waits for at least this many. */
  static final long MIN_STALE_KEYS = 1024;

  /** Keys removed since the filter was made or its last rebuild began (under the writer lock). */
  private long staleKeys;

  /** {@link #staleKeys} when the running rebuild began, restored if it is abandoned. */
  private long staleAtBegin;

  /** Rebuilds finished (read by metrics). */
  private final AtomicLong rebuilds = new AtomicLong();

  /**
   * A filter whose first segment holds {@code expectedKeys} keys at half its capacity, within an
   * eighth of the heap.
   */
  KeyFilter(long expectedKeys) {
    this(expectedKeys, Runtime.getRuntime().maxMemory() / 8);
  }

  /** A filter as above, all of whose segments take at most {@code maxBytes}. */
  KeyFilter(long expectedKeys, long maxBytes) {
    Segment first = new Segment(blocksFor(expectedKeys, maxBytes));
    this.segments = new Segment[] {first};
    this.newest = first;
    this.maxBytes = maxBytes;
  }

  /**
   * The blocks of a first segment for {@code expectedKeys} keys at half its capacity: a power of
   * two in [{@link #MIN_BLOCKS}, {@link #MAX_BLOCKS}], and at most {@code maxBytes} unless that is
   * less than the smallest.
   */
  static int blocksFor(long expectedKeys, long maxBytes) {
    long maxKeys = (long) MAX_BLOCKS * 512 / BITS_PER_KEY / 2;
    long bits = Math.min(Math.max(0, expectedKeys), maxKeys) * 2 * BITS_PER_KEY;
    long blocks = Long.highestOneBit(Math.max(1, (bits + 511) / 512 - 1)) << 1;
    while (blocks > MIN_BLOCKS && blocks * BLOCK_BYTES > maxBytes) {
      blocks /= 2;
    }
    return (int) Math.min(MAX_BLOCKS, Math.max(MIN_BLOCKS, blocks));
  }

  /**
   * True when {@code filter} is a filter (a writable store keeps one, a read-only one none) that
   * denies {@code keyHash}: the store surely holds no record of the key.
   */
  static boolean denies(KeyFilter filter, long keyHash) {
    return filter != null && !filter.mightContain(keyHash);
  }

  /** False when no key of hash {@code keyHash} was ever added. */
  boolean mightContain(long keyHash) {
    long h = mix(keyHash);
    for (Segment seg : segments) {
      if (seg.contains(h)) {
        return true;
      }
    }
    return false;
  }

  /** Adds {@code keyHash}; callers are serialized (the store's writer lock). */
  void add(long keyHash) {
    Segment seg = newest;
    if (++seg.added > seg.capacity && canGrow(seg)) {
      seg = grow(seg);
    }
    long h = mix(keyHash);
    seg.set(h);
    Segment r = rebuilt;
    if (r != null) {
      r.added++;
      r.set(h);
    }
  }

  /**
   * {@code listener} is told (quickly, under the writer lock) when a rebuild is due: a segment was
   * appended, or the removed keys reached the stored ones ({@link #removed}).
   */
  void onRebuildWanted(Runnable listener) {
    this.onRebuildWanted = listener;
  }

  /**
   * {@code n} stored keys were removed (a purge: under the writer lock), {@code storedKeys} are
   * left. Their bits stay set; once the removed keys are at least {@link #MIN_STALE_KEYS} and as
   * many as the stored ones, a rebuild is asked for.
   */
  void removed(long n, long storedKeys) {
    staleKeys += n;
    if (staleRebuildDue(storedKeys)) {
      onRebuildWanted.run();
    }
  }

  private boolean staleRebuildDue(long storedKeys) {
    return staleKeys >= MIN_STALE_KEYS && staleKeys >= storedKeys;
  }

  /**
   * Starts a rebuild into one segment for {@code records} stored keys (under the writer lock, no
   * ingest in progress): from now on every {@link #add} sets its key in the new segment too. False
   * (nothing started) when the filter has one segment and too few removed keys ({@link #removed}),
   * a rebuild is under way, or the new segment would not fit the memory budget beside the old ones
   * at a capacity of {@code records} or more.
   */
  boolean beginRebuild(long records) {
    if (rebuilt != null || (segments.length < 2 && !staleRebuildDue(records))) {
      return false;
    }
    long budget = maxBytes - bytes();
    int blocks = blocksFor(records, budget);
    if ((long) blocks * BLOCK_BYTES > budget || (long) blocks * 512 / BITS_PER_KEY < records) {
      return false;
    }
    rebuilt = new Segment(blocks);
    staleAtBegin = staleKeys;
    staleKeys = 0; // a key removed from here on may be in the scan's snapshot: it counts again
    return true;
  }

  /** Adds the rebuild's scanned keys {@code keyHashes[0, n)} (under the writer lock). */
  void addRebuilt(long[] keyHashes, int n) {
    Segment r = rebuilt;
    if (r == null) {
      throw new IllegalStateException("no key filter rebuild is under way");
    }
    for (int i = 0; i < n; i++) {
      r.added++;
      r.set(mix(keyHashes[i]));
    }
  }

  /**
   * Ends a rebuild (under the writer lock): its segment, which holds every key stored at the
   * rebuild's snapshot and every key added since, replaces all segments.
   */
  void finishRebuild() {
    Segment r = rebuilt;
    if (r == null) {
      throw new IllegalStateException("no key filter rebuild is under way");
    }
    rebuilt = null;
    newest = r;
    segments = new Segment[] {r}; // one volatile write: a reader sees the old list or this one
    rebuilds.incrementAndGet();
  }

  /**
   * Drops a rebuild that will not finish (under the writer lock); the segments stay as they are.
   */
  void abandonRebuild() {
    if (rebuilt != null) {
      staleKeys += staleAtBegin;
    }
    rebuilt = null;
  }

  /** Rebuilds finished since the filter was made. */
  long rebuilds() {
    return rebuilds.get();
  }

  /**
   * Adds {@code keyHashes[0, n)} under this filter's monitor: safe beside other calls of this
   * method (the rebuild's scanners), not beside {@link #add}.
   */
  synchronized void addAll(long[] keyHashes, int n) {
    for (int i = 0; i < n; i++) {
      add(keyHashes[i]);
    }
  }

  /** The segments' memory, a rebuild's segment included, in bytes. */
  long bytes() {
    long b = 0;
    for (Segment seg : segments) {
      b += seg.bytes();
    }
    Segment r = rebuilt;
    return r == null ? b : b + r.bytes();
  }

  /** Whether a segment of twice the blocks of {@code full} may follow it. */
  private boolean canGrow(Segment full) {
    return full.blocks < MAX_BLOCKS && bytes() + 2L * full.bytes() <= maxBytes;
  }

  /** How many segments the filter has grown to. */
  int segmentCount() {
    return segments.length;
  }

  /** Appends a segment of twice the blocks of {@code full}, which counts one key too many. */
  private Segment grow(Segment full) {
    full.added--;
    Segment next = new Segment(Math.min(MAX_BLOCKS, full.blocks * 2));
    next.added = 1;
    Segment[] grown = Arrays.copyOf(segments, segments.length + 1);
    grown[grown.length - 1] = next;
    segments = grown; // before any key goes into it
    newest = next;
    onRebuildWanted.run();
    return next;
  }

  /** MurmurHash3's 64-bit finalizer. */
  static long mix(long k) {
    k ^= k >>> 33;
    k *= 0xff51afd7ed558ccdL;
    k ^= k >>> 33;
    k *= 0xc4ceb9fe1a85ec53L;
    k ^= k >>> 33;
    return k;
  }

  private static final class Segment {
    final long[] words;
    final int blocks;
    final int blockShift; // 64 - log2(blocks): the block is h >>> blockShift
    final long capacity;
    long added; // keys added, under the adders' serialization

    Segment(int blocks) {
      this.blocks = blocks;
      this.words = new long[blocks * WORDS_PER_BLOCK];
      this.blockShift = 64 - Integer.numberOfTrailingZeros(blocks);
      this.capacity = (long) blocks * 512 / BITS_PER_KEY;
    }

    long bytes() {
      return (long) blocks * BLOCK_BYTES;
    }

    private int base(long h) {
      return (int) (h >>> blockShift) * WORDS_PER_BLOCK;
    }

    boolean contains(long h) {
      int base = base(h);
      int x = (int) h;
      for (int i = 0; i < WORDS_PER_BLOCK; i++) {
        if ((words[base + i] & (1L << ((x * SALT[i]) >>> 26))) == 0) {
          return false;
        }
      }
      return true;
    }

    void set(long h) {
      int base = base(h);
      int x = (int) h;
      for (int i = 0; i < WORDS_PER_BLOCK; i++) {
        words[base + i] |= 1L << ((x * SALT[i]) >>> 26);
      }
    }
  }
}
