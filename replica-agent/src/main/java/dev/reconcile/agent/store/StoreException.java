package dev.reconcile.agent.store;

/**
 * A store operation failed: RocksDB refused a read or write, the directory was created with other
 * parameters, or a stored record is corrupt. A write that throws this left the store and its
 * sketches unchanged.
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
