package dev.reconcile.agent.store;

import com.dynatrace.hash4j.hashing.Hashing;
import java.nio.charset.StandardCharsets;

/** Frozen mapping from configured node ids (strings) to the 64-bit {@code origin} of records. */
public final class NodeIds {
  private NodeIds() {}

  /**
   * The origin of records written by node {@code nodeId}: unseeded XXH3-64 (hash4j {@code
   * Hashing.xxh3_64()}) of its UTF-8 bytes. Frozen: it is stored in every record, so changing it
   * would make a node's own old writes look foreign. Two distinct node ids collide with probability
   * about {@code n^2 / 2^65}.
   */
  public static long origin(String nodeId) {
    if (nodeId == null || nodeId.isEmpty()) {
      throw new IllegalArgumentException("node id is empty");
    }
    return Hashing.xxh3_64().hashBytesToLong(nodeId.getBytes(StandardCharsets.UTF_8));
  }
}
