package dev.reconcile.cli;

import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
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
 */
final class FileSource implements RecordSource {
  private static final int BLOCK = 1 << 16;

  private final String label;
  private final Path path;
  private final boolean stripCr;

  FileSource(String label, Path path, boolean stripCr) {
    this.label = label;
    this.path = path;
    this.stripCr = stripCr;
  }

  @Override
  public void readInto(RecordTable table, Progress progress) {
    if (Files.isDirectory(path)) {
      throw new CliException(label + ": Is a directory");
    }
    boolean gzip = false;
    try (InputStream raw = new BufferedInputStream(Files.newInputStream(path), BLOCK)) {
      raw.mark(2);
      int b0 = raw.read();
      int b1 = raw.read();
      raw.reset();
      gzip = (b0 == 0x1f && b1 == 0x8b) || path.getFileName().toString().endsWith(".gz");
      try (InputStream in = gzip ? new GZIPInputStream(raw, BLOCK) : raw) {
        read(in, table, progress);
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

  private void read(InputStream in, RecordTable table, Progress progress) throws IOException {
    byte[] block = new byte[BLOCK];
    byte[] line = new byte[256];
    int lineLen = 0;
    long bytes = 0;
    boolean pending = false; // bytes of an unterminated line are buffered
    int r;
    while ((r = in.read(block)) > 0) {
      bytes += r;
      int start = 0;
      for (int i = 0; i < r; i++) {
        if (block[i] != '\n') {
          continue;
        }
        if (pending) {
          line = append(line, lineLen, block, start, i - start);
          lineLen += i - start;
          record(line, 0, lineLen, table);
          lineLen = 0;
          pending = false;
        } else {
          record(block, start, i - start, table);
        }
        start = i + 1;
        progress.reading(label, table.recordsRead(), bytes);
      }
      if (start < r) {
        line = append(line, lineLen, block, start, r - start);
        lineLen += r - start;
        pending = true;
      }
    }
    if (pending) {
      record(line, 0, lineLen, table);
    }
  }

  private static byte[] append(byte[] line, int len, byte[] src, int off, int n) {
    if (line.length - len < n) {
      long cap = Math.max((long) line.length * 2, (long) len + n);
      if (cap > Integer.MAX_VALUE - 16) {
        throw new CliException("line longer than 2 GiB");
      }
      line = Arrays.copyOf(line, (int) cap);
    }
    System.arraycopy(src, off, line, len, n);
    return line;
  }

  private void record(byte[] b, int off, int len, RecordTable table) {
    if (stripCr && len > 0 && b[off + len - 1] == '\r') {
      len--;
    }
    int end = off + len;
    int tab = off;
    while (tab < end && b[tab] != '\t') {
      tab++;
    }
    if (tab == end) {
      table.add(b, off, len, b, end, 0);
    } else {
      table.add(b, off, tab - off, b, tab + 1, end - tab - 1);
    }
  }
}
