package dev.reconcile.core;

/**
 * Caps one session enforces on what a peer sends, checked before anything is allocated from it.
 *
 * @param maxMissingPerPartition most elements a partition's result may list (both directions)
 * @param chunkElements elements per digest or result chunk this side sends (and most it accepts)
 */
public record SessionLimits(int maxMissingPerPartition, int chunkElements) {
  public static final SessionLimits DEFAULT = new SessionLimits(1 << 22, 1 << 16);

  public SessionLimits {
    if (maxMissingPerPartition < 1 || chunkElements < 1 || chunkElements > (1 << 20)) {
      throw new IllegalArgumentException("bad session limits");
    }
  }
}
