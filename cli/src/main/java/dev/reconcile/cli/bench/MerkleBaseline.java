package dev.reconcile.cli.bench;

/**
 * Baseline: a fixed-depth Merkle tree exchange in the manner of Cassandra's anti-entropy repair.
 *
 * <p>Each side buckets its elements into {@code 2^depth} leaves by the top {@code depth} bits of a
 * mix of the element (Cassandra buckets by token range; default depth 15, i.e. 32 768 leaves). A
 * leaf's hash is the XOR of its elements' 64-bit hashes (Cassandra XORs row hashes); an inner
 * node's hash is a 64-bit mix of its two children. The trees sit in one array in heap order (node
 * {@code i} has children {@code 2i} and {@code 2i+1}, the root is 1, leaves are {@code 2^depth ..
 * 2^(depth+1)-1}).
 *
 * <p>Two exchanges are costed, with 8-byte hashes (Cassandra's are 32 bytes, so this favours the
 * baseline):
 *
 * <ul>
 *   <li><b>top-down</b>: one round trip per level. The initiator sends its root hash; then, level
 *       by level, it sends the hashes of the children of every node found different (8 B each) and
 *       the responder answers with a bitmap of which differ (1 bit each, rounded up to bytes per
 *       level). The differing leaves' element lists then go both ways (8 B per element, one more
 *       round trip). Round trips: {@code depth + 2}.
 *   <li><b>full tree</b> (what Cassandra actually ships): each side sends all {@code 2^depth} leaf
 *       hashes (inner nodes follow from them), then the differing leaves' element lists both ways.
 *       Round trips: 2.
 * </ul>
 */
final class MerkleBaseline {
  private MerkleBaseline() {}

  /**
   * Bytes and round trips of one comparison; {@code differingLeaves} for the report; the elements
   * each side sends for the differing leaves (what the other side compares with its own to find the
   * difference).
   */
  record Cost(
      long topDownBytes,
      int topDownRoundTrips,
      long fullTreeBytes,
      int fullTreeRoundTrips,
      long differingLeaves,
      long[] differingLeafElementsA,
      long[] differingLeafElementsB) {}

  static Cost compare(long[] a, int aSize, long[] b, int bSize, int depth) {
    if (depth < 1 || depth > 24) {
      throw new IllegalArgumentException("merkle depth " + depth + " outside [1, 24]");
    }
    int leaves = 1 << depth;
    long[] ta = new long[2 * leaves];
    long[] tb = new long[2 * leaves];
    int[] ca = new int[leaves];
    int[] cb = new int[leaves];
    fill(a, aSize, depth, ta, ca);
    fill(b, bSize, depth, tb, cb);
    // Top-down: nodes at each level whose parent differed are compared.
    long bytes = 8 + 1; // root hash, one-byte answer
    int[] frontier = ta[1] != tb[1] ? new int[] {1} : new int[0];
    int frontierSize = frontier.length;
    for (int level = 1; level <= depth && frontierSize > 0; level++) {
      int compared = 2 * frontierSize;
      bytes += 8L * compared + (compared + 7) / 8;
      int[] next = new int[compared];
      int m = 0;
      for (int k = 0; k < frontierSize; k++) {
        int node = frontier[k];
        for (int child = 2 * node; child <= 2 * node + 1; child++) {
          if (ta[child] != tb[child]) {
            next[m++] = child;
          }
        }
      }
      frontier = next;
      frontierSize = m;
    }
    long leafElements = 0;
    long differing = 0;
    for (int leaf = 0; leaf < leaves; leaf++) {
      if (ta[leaves + leaf] != tb[leaves + leaf]) {
        differing++;
        leafElements += ca[leaf] + cb[leaf];
      }
    }
    long listBytes = 8 * leafElements;
    long fullTree = 2L * 8 * leaves + listBytes;
    return new Cost(
        bytes + listBytes,
        depth + 2,
        fullTree,
        2,
        differing,
        inDifferingLeaves(a, aSize, depth, ta, tb),
        inDifferingLeaves(b, bSize, depth, ta, tb));
  }

  /** The elements of {@code elements} whose leaf hashes differ between the two trees. */
  private static long[] inDifferingLeaves(
      long[] elements, int size, int depth, long[] ta, long[] tb) {
    int leaves = 1 << depth;
    java.util.stream.LongStream.Builder out = java.util.stream.LongStream.builder();
    for (int i = 0; i < size; i++) {
      int leaf = (int) (mix(elements[i]) >>> (64 - depth));
      if (ta[leaves + leaf] != tb[leaves + leaf]) {
        out.add(elements[i]);
      }
    }
    return out.build().toArray();
  }

  private static void fill(long[] elements, int size, int depth, long[] tree, int[] counts) {
    int leaves = counts.length;
    for (int i = 0; i < size; i++) {
      long h = mix(elements[i]);
      int leaf = (int) (h >>> (64 - depth));
      tree[leaves + leaf] ^= mix(h + 0x9E3779B97F4A7C15L);
      counts[leaf]++;
    }
    for (int node = leaves - 1; node >= 1; node--) {
      tree[node] = mix(tree[2 * node] * 0xC2B2AE3D27D4EB4FL ^ tree[2 * node + 1]);
    }
  }

  /** SplitMix64 finaliser. */
  static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }
}
