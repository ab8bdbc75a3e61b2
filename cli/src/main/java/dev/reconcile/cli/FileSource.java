package dev.reconcile.cli;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipException;

/**
 * A text input: one record per line, {@code KEY} or {@code KEY<TAB>VALUE}.
 *
 * <ul>
 *   <li>Lines end at LF ({@code 0x0a}); a final line without LF counts; no other byte is special.
 *   <li>The key is everything before the first TAB, the value everything after it (further TABs
 *       belong to the value). A line without TAB has the empty value, so {@code k} and {@code
 *       k<TAB>} are the same record. An empty line is a record with the empty key.
 *   <li>Bytes are taken as they are (no charset): keys and values may hold NUL, 0xff, invalid
 *       UTF-8.
 *   <li>A CR before the LF is part of the line (as in diff(1)) unless {@code --strip-trailing-cr}.
 *   <li>Gzip (one or more members) is decompressed when the file starts with the gzip magic bytes
 *       {@code 1f 8b} or its name ends in {@code .gz}; a {@code .gz} file that is not gzip is an
 *       error.
 * </ul>
 *
 * <p>Reading: the input is read (or inflated) in {@value #READ}-byte steps straight into large
 * blocks that become chunks of the table's {@link ByteArena}; after each step the complete lines
 * just read are split and hashed while they are still in cache, and each record is addressed where
 * it lies ({@link RecordTable#addInPlace}): no per-line object and no per-line copy. A line cut by
 * the end of a block is moved to the start of the next one, whose size at least doubles the line's,
 * so a line of any length up to 2 GiB costs linear time. A last line without LF gets one appended
 * in the block, so that every line the splitter sees ends with LF.
 */
final class FileSource implements RecordSource {
  /** Bytes read or inflated per step. */
  static final int READ = 1 << 18;

  /** Usual block size. */
  static final int BLOCK = 1 << 23;

  /** Smallest block (a small file gets a block of its own size). */
  static final int MIN_BLOCK = 1 << 12;

  private static final int MAX_ARRAY = Integer.MAX_VALUE - 16;

  private final String label;
  private final Path path;
  private final boolean stripCr;
  private final int readSize;
  private final int blockSize;

  FileSource(String label, Path path, boolean stripCr) {
    this(label, path, stripCr, READ, BLOCK);
  }

  /** With other step and block sizes (tests use tiny ones to cross every boundary often). */
  FileSource(String label, Path path, boolean stripCr, int readSize, int blockSize) {
    if (readSize < 4 || blockSize < readSize) {
      throw new IllegalArgumentException("read " + readSize + ", block " + blockSize);
    }
    this.label = label;
    this.path = path;
    this.stripCr = stripCr;
    this.readSize = readSize;
    this.blockSize = blockSize;
  }

  @Override
  public void readInto(RecordTable table, Progress progress) {
    if (Files.isDirectory(path)) {
      throw new CliException(label + ": Is a directory");
    }
    boolean gzip = false;
    try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
      ByteBuffer magic = ByteBuffer.allocate(2);
      while (magic.hasRemaining() && ch.read(magic, magic.position()) > 0) {
        // positional reads: the channel's position stays at 0
      }
      gzip =
          (magic.position() == 2 && magic.get(0) == (byte) 0x1f && magic.get(1) == (byte) 0x8b)
              || path.getFileName().toString().endsWith(".gz");
      long size = ch.size();
      if (gzip) {
        // The gzip trailer's ISIZE (uncompressed size mod 2^32, of the last member) sizes the
        // record arrays when it is plausible, between 1 and 64 times the compressed size (so a
        // file that lies cannot make them much larger than its real text could); otherwise they
        // grow as lines come.
        long isize = size >= 18 ? trailerSize(ch, size) : -1;
        boolean plausible = isize >= size && isize <= 64 * size;
        try (InputStream in = new GZIPInputStream(Channels.newInputStream(ch), 1 << 16)) {
          read(in::read, plausible ? isize : size * 4, plausible, table, progress);
        }
      } else {
        read((b, off, len) -> ch.read(ByteBuffer.wrap(b, off, len)), size, true, table, progress);
      }
    } catch (NoSuchFileException e) {
      throw new CliException(label + ": No such file or directory");
    } catch (AccessDeniedException e) {
      throw new CliException(label + ": Permission denied");
    } catch (ZipException | EOFException e) {
      throw new CliException(
          label
              + ": "
              + (gzip ? "corrupt gzip input" : "read error")
              + " ("
              + e.getMessage()
              + ")");
    } catch (IOException e) {
      throw new CliException(
          label + ": " + (gzip ? "corrupt gzip input or " : "") + "read error (" + e + ")");
    }
  }

  /** The last four bytes of the file, little-endian, unsigned (a gzip trailer's ISIZE). */
  private static long trailerSize(FileChannel ch, long size) throws IOException {
    ByteBuffer b = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
    while (b.hasRemaining() && ch.read(b, size - 4 + b.position()) > 0) {
      // positional reads: the channel's position stays at 0
    }
    return b.hasRemaining() ? -1 : b.getInt(0) & 0xffff_ffffL;
  }

  /** {@code read(byte[], int, int)} of an input stream or a channel: -1 at the end. */
  @FunctionalInterface
  private interface Input {
    int read(byte[] b, int off, int len) throws IOException;
  }

  /**
   * Reads {@code in} to its end into blocks of the table's arena. {@code sizeHint} is the expected
   * byte count ({@code exactSize}: the file's size, or a gzip file's own claim of it, used to size
   * the table's arrays).
   */
  private void read(
      Input in, long sizeHint, boolean exactSize, RecordTable table, Progress progress)
      throws IOException {
    ByteArena arena = table.arena();
    byte[] block =
        new byte[(int) Math.max(Math.min(MIN_BLOCK, blockSize), Math.min(blockSize, sizeHint + 1))];
    int chunk = -1; // the block's arena chunk, once a line in it is kept
    int start = 0; // first byte of the first line not yet split
    int end = 0; // bytes in the block
    long total = 0;
    boolean hinted = !exactSize;
    while (true) {
      // A new block when the free room is too small for a worthwhile read, or, when the size is
      // known and all of it has been read, when no byte is left for the end-of-file read (and an
      // LF appended to a last line): a small file's own-size block is not traded for a full one.
      long left = exactSize ? Math.max(0, sizeHint - total) : -1; // bytes to come; -1: unknown
      long minRoom = left < 0 ? readSize / 4 : Math.max(1, Math.min(readSize / 4, left + 1));
      if (block.length - end < minRoom) {
        // Move the unfinished line to a new block at least twice its size; the last block of a
        // file of known size holds what is left of it (and an LF), not a whole block.
        int tail = end - start;
        long wanted = left > 0 ? Math.min(blockSize, tail + left + 1) : blockSize;
        long size = Math.min(MAX_ARRAY, Math.max(wanted, 2L * tail + readSize));
        if (size - tail < readSize / 4) {
          throw new CliException(label + ": line longer than 2 GiB");
        }
        byte[] next = new byte[(int) size];
        System.arraycopy(block, start, next, 0, tail);
        block = next;
        chunk = -1;
        start = 0;
        end = tail;
      }
      int r = in.read(block, end, Math.min(readSize, block.length - end));
      if (r < 0) {
        break;
      }
      total += r;
      int lastLf = end + r - 1;
      while (lastLf >= end && block[lastLf] != '\n') {
        lastLf--;
      }
      boolean found = lastLf >= end; // an LF among the bytes just read
      end += r;
      if (found) {
        if (chunk < 0) {
          chunk = arena.adopt(block);
        }
        int before = table.recordsRead();
        split(block, chunk, start, lastLf + 1, table);
        if (!hinted) {
          // Size the record arrays once, from the first lines' average length.
          hinted = true;
          long lines = (long) table.recordsRead() - before;
          table.expect(sizeHint * lines / (lastLf + 1 - start) * 21 / 20 + 1024);
        }
        start = lastLf + 1;
        progress.report(label, table.recordsRead(), total);
      }
    }
    if (start < end) {
      // A last line without LF: give it one, so that the splitter finds every line's end (the
      // block has room: at least one byte was free before the read that found the end).
      if (chunk < 0) {
        chunk = arena.adopt(block);
      }
      block[end] = '\n';
      split(block, chunk, start, end + 1, table);
    }
  }

  /**
   * Splits the lines of {@code b[from, to)}, which ends with LF, into records of arena chunk {@code
   * chunk}: the key up to the first TAB (or the LF), the value after it up to the LF.
   */
  private void split(byte[] b, int chunk, int from, int to, RecordTable table) {
    int p = from;
    while (p < to) {
      int q = keyEnd(b, p);
      int keyLen = q - p;
      int valLen = 0;
      int lineEnd = q;
      if (b[q] == '\t') {
        lineEnd = lineEnd(b, q + 1);
        valLen = lineEnd - q - 1;
        if (stripCr && valLen > 0 && b[lineEnd - 1] == '\r') {
          valLen--;
        }
      } else if (stripCr && keyLen > 0 && b[q - 1] == '\r') {
        keyLen--;
      }
      table.addInPlace(chunk, b, p, keyLen, valLen);
      p = lineEnd + 1;
    }
  }

  private static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  private static final long ONES = 0x0101_0101_0101_0101L;
  private static final long HIGHS = 0x8080_8080_8080_8080L;
  private static final long TABS = '\t' * ONES;
  private static final long LFS = '\n' * ONES;

  /**
   * Position of the first TAB or LF at or after {@code p}; there is an LF before the end of {@code
   * b}. Eight bytes at a time (SWAR): in {@code x = word ^ pattern} a byte equal to the pattern's
   * is zero, and {@code (x - 0x01..01) & ~x & 0x80..80} flags it; the lowest flag (little-endian:
   * the first byte) is always a true zero, as a borrow only runs towards higher bytes.
   */
  static int keyEnd(byte[] b, int p) {
    for (int last = b.length - 8; p <= last; p += 8) {
      long w = (long) LONGS.get(b, p);
      long t = w ^ TABS;
      long l = w ^ LFS;
      long z = (((t - ONES) & ~t) | ((l - ONES) & ~l)) & HIGHS;
      if (z != 0) {
        return p + (Long.numberOfTrailingZeros(z) >>> 3);
      }
    }
    byte c;
    while ((c = b[p]) != '\t' && c != '\n') {
      p++;
    }
    return p;
  }

  /** Position of the first LF at or after {@code p}, as {@link #keyEnd}. */
  static int lineEnd(byte[] b, int p) {
    for (int last = b.length - 8; p <= last; p += 8) {
      long l = (long) LONGS.get(b, p) ^ LFS;
      long z = (l - ONES) & ~l & HIGHS;
      if (z != 0) {
        return p + (Long.numberOfTrailingZeros(z) >>> 3);
      }
    }
    while (b[p] != '\n') {
      p++;
    }
    return p;
  }
}
