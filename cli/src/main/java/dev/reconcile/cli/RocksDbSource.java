package dev.reconcile.cli;

import dev.reconcile.agent.store.RocksDbLibrary;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.rocksdb.InfoLogLevel;
import org.rocksdb.Logger;
import org.rocksdb.Options;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;

/**
 * A plain key-value RocksDB (for example one written by RocksDB's {@code ldb} tool): every entry of
 * the default column family is a record whose identity is its key and value, as for a file.
 *
 * <p>Opened with {@link RocksDB#openReadOnly} and never modified: no WAL replay is persisted, no
 * compaction runs, and the info log goes to a Java logger that drops it instead of creating or
 * rotating the {@code LOG} file in the directory. Other column families are ignored.
 */
final class RocksDbSource implements RecordSource {
  private final String label;
  private final Path path;

  RocksDbSource(String label, Path path) {
    this.label = label;
    this.path = path;
  }

  @Override
  public void readInto(RecordTable table, Progress progress) {
    if (!Files.exists(path)) {
      throw new CliException(label + ": No such file or directory");
    }
    if (!Files.isDirectory(path)) {
      throw new CliException(label + ": Not a directory (a RocksDB side is a database directory)");
    }
    if (!Files.isRegularFile(path.resolve("CURRENT"))) {
      throw new CliException(label + ": not a RocksDB database (no CURRENT file)");
    }
    RocksDbLibrary.load();
    try (Options options = new Options();
        Logger quiet = new DiscardingLogger()) {
      options.setCreateIfMissing(false).setLogger(quiet);
      try (RocksDB db = RocksDB.openReadOnly(options, path.toString(), false);
          ReadOptions ro = new ReadOptions().setFillCache(false);
          RocksIterator it = db.newIterator(ro)) {
        scan(it, table, progress);
      }
    } catch (RocksDBException e) {
      throw new CliException(label + ": cannot read RocksDB (" + oneLine(e.getMessage()) + ")");
    }
  }

  private void scan(RocksIterator it, RecordTable table, Progress progress)
      throws RocksDBException {
    ByteBuffer kb = ByteBuffer.allocateDirect(4096);
    ByteBuffer vb = ByteBuffer.allocateDirect(4096);
    byte[] k = new byte[4096];
    byte[] v = new byte[4096];
    long bytes = 0;
    for (it.seekToFirst(); it.isValid(); it.next()) {
      kb.clear();
      int kl = it.key(kb);
      if (kl > kb.capacity()) {
        kb = ByteBuffer.allocateDirect(Math.max(kl, kb.capacity() * 2));
        it.key(kb);
      }
      vb.clear();
      int vl = it.value(vb);
      if (vl > vb.capacity()) {
        vb = ByteBuffer.allocateDirect(Math.max(vl, vb.capacity() * 2));
        it.value(vb);
      }
      if (k.length < kl) {
        k = new byte[kb.capacity()];
      }
      if (v.length < vl) {
        v = new byte[vb.capacity()];
      }
      kb.get(k, 0, kl);
      vb.get(v, 0, vl);
      table.add(k, 0, kl, v, 0, vl);
      bytes += kl + vl;
      progress.reading(label, table.recordsRead(), bytes);
    }
    it.status();
  }

  private static String oneLine(String s) {
    return s == null ? "unknown error" : s.replace('\n', ' ').trim();
  }

  /** Keeps RocksDB from writing a LOG file into a directory it must not modify. */
  private static final class DiscardingLogger extends Logger {
    DiscardingLogger() {
      super(InfoLogLevel.FATAL_LEVEL);
    }

    @Override
    protected void log(InfoLogLevel level, String message) {}
  }
}
