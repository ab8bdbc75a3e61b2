package dev.reconcile.core;

/**
 * Where an initiator records which partitions of a round are repaired both ways, so that an
 * interrupted round resumes with the others ({@link SessionConfig#partitions()}). The agent keeps
 * it in its store, per peer; called from the thread that drives the session.
 */
public interface RoundProgress {
  /** Keeps nothing. */
  RoundProgress NONE =
      new RoundProgress() {
        @Override
        public void partitionRepaired(int partition) {}

        @Override
        public void roundComplete() {}
      };

  /** Every record of {@code partition} went both ways and was applied. */
  void partitionRepaired(int partition);

  /** The round ended with its verification: the marks are no longer needed. */
  void roundComplete();
}
