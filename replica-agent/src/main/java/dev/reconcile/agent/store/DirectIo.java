package dev.reconcile.agent.store;

import com.sun.nio.file.ExtendedOpenOption;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;

/**
 * Whether RocksDB's flushes and compactions can write and read a store's table files with {@code
 * O_DIRECT} ({@code use_direct_io_for_flush_and_compaction}), past the page cache.
 *
 * <p>When a store wants it (agent setting {@code direct-io}, off by default; docs/decisions.md,
 * "direct I/O for flushes and compactions"): a buffered write copies every byte into page-cache
 * pages, and on the virtual machines this project is measured on a page the guest has not touched
 * for some seconds costs about 12 us to touch again (presumably the host backing it anew: 340 MB/s
 * a thread, against 3 GB/s for a page in use); compactions of large values write and read every
 * byte so. With {@code O_DIRECT} the bytes go between RocksDB's own reused buffers and the device:
 * RocksDB's background threads used half the CPU in a listed repair of 64 KiB values, which ran
 * 1.04-1.28 x (8 of 8 pairs). The price is paid by reads: what a flush or compaction wrote is not
 * in the page cache, and the first read of it fills the page cache on the reading thread; client
 * puts that overwrite keys (the write path reads the current record) ran 0.84-0.89 x at 100 B
 * (docs/benchmarks.md section 3, "stop 48"). User reads keep the page cache and the block cache;
 * only what flushes and compactions write no longer passes through it.
 *
 * <p>Not every file system takes {@code O_DIRECT} (tmpfs before Linux 6.6, some network file
 * systems); RocksDB would then fail its first flush, and the store would stop taking writes. So the
 * store asks first: {@link #unsupportedReason} writes one aligned block with {@code O_DIRECT} into
 * a probe file in the data folder, and the store falls back to buffered I/O, saying why, when that
 * fails.
 */
final class DirectIo {
  /** The probe file's name, in the data folder; removed after the probe. */
  static final String PROBE = "direct-io-probe";

  private DirectIo() {}

  /**
   * Empty when a file in {@code dir} can be written with {@code O_DIRECT}; otherwise why not (the
   * error of the open or of the aligned write).
   */
  static Optional<String> unsupportedReason(Path dir) {
    Path probe = dir.resolve(PROBE);
    try {
      try {
        int block = (int) Math.max(4096, Files.getFileStore(dir).getBlockSize());
        ByteBuffer aligned = ByteBuffer.allocateDirect(2 * block).alignedSlice(block);
        aligned.limit(block);
        try (FileChannel ch =
            FileChannel.open(
                probe,
                StandardOpenOption.CREATE,
                StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING,
                ExtendedOpenOption.DIRECT)) {
          while (aligned.hasRemaining()) {
            ch.write(aligned);
          }
        }
        return Optional.empty();
      } finally {
        Files.deleteIfExists(probe);
      }
    } catch (IOException | UnsupportedOperationException e) {
      return Optional.of(
          "a direct (O_DIRECT) write in "
              + dir
              + " failed: "
              + e.getClass().getSimpleName()
              + (e.getMessage() == null ? "" : ": " + e.getMessage()));
    }
  }
}
