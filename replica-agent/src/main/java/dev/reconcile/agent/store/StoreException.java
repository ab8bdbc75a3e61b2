package dev.reconcile.agent.store;

/**
 * A store operation failed: RocksDB refused a read or write, the directory was created with other
 * parameters, or a stored record is corrupt. The write batch that threw this left the store and its
 * sketches unchanged; an operation of several write batches (a bulk load, a repair batch of several
 * slices) keeps those committed before it, as its message says.
 */
public class StoreException extends RuntimeException {
  public StoreException(String message) {
    super(message);
  }

  public StoreException(String message, Throwable cause) {
    super(message, cause);
  }

  /** A stored record failed validation (format byte, length, flags or CRC32C). */
  public static final class Corrupt extends StoreException {
    public Corrupt(String message) {
      super(message);
    }
  }
}
