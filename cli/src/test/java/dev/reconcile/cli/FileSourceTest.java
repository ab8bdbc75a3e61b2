package dev.reconcile.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.reconcile.core.HashSpec;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The file reader against an independent oracle: a plain byte-by-byte split of the whole input (LF
 * ends a line, the first TAB ends the key, a CR before LF dropped only when asked, a last line
 * without LF kept). Every record the reader stores (key, value, element) must equal the oracle's,
 * in order, whatever the step and block sizes, so tiny sizes make lines cross every boundary.
 */
class FileSourceTest {
  @TempDir Path dir;

  private static final HashSpec SPEC = HashSpec.xxh3(7);

  /** The oracle's records: key and value of every line, in order. */
  private static List<byte[][]> oracle(byte[] in, boolean stripCr) {
    List<byte[][]> out = new ArrayList<>();
    int p = 0;
    while (p < in.length) {
      int end = p;
      while (end < in.length && in[end] != '\n') {
        end++;
      }
      int lineEnd = end;
      if (stripCr && lineEnd > p && in[lineEnd - 1] == '\r') {
        lineEnd--;
      }
      int tab = p;
      while (tab < lineEnd && in[tab] != '\t') {
        tab++;
      }
      byte[] key = Arrays.copyOfRange(in, p, tab);
      byte[] value = tab < lineEnd ? Arrays.copyOfRange(in, tab + 1, lineEnd) : new byte[0];
      out.add(new byte[][] {key, value});
      p = end + 1;
    }
    return out;
  }

  private RecordTable read(Path file, boolean stripCr, int readSize, int blockSize) {
    RecordTable t = new RecordTable(SPEC);
    new FileSource("file:" + file, file, stripCr, readSize, blockSize).readInto(t, Progress.none());
    return t;
  }

  private void check(String what, long seed, byte[] content, boolean gzip, boolean stripCr)
      throws IOException {
    Path f = dir.resolve(what + (gzip ? ".gz" : ".txt"));
    if (gzip) {
      try (OutputStream o = new GZIPOutputStream(Files.newOutputStream(f))) {
        o.write(content);
      }
    } else {
      Files.write(f, content);
    }
    List<byte[][]> want = oracle(content, stripCr);
    int[][] sizes = {{4, 4}, {4, 16}, {16, 64}, {64, 1000}, {FileSource.READ, FileSource.BLOCK}};
    for (int[] s : sizes) {
      RecordTable t = read(f, stripCr, s[0], s[1]);
      String as = what + " seed " + seed + " read " + s[0] + " block " + s[1];
      assertThat(t.recordsRead()).as(as).isEqualTo(want.size());
      for (int i = 0; i < want.size(); i++) {
        byte[] k = want.get(i)[0];
        byte[] v = want.get(i)[1];
        assertThat(t.key(i)).as("%s record %d key", as, i).isEqualTo(k);
        assertThat(t.value(i)).as("%s record %d value", as, i).isEqualTo(v);
        assertThat(t.element(i))
            .as("%s record %d element", as, i)
            .isEqualTo(SPEC.element(SPEC.keyHash(k), 0, 0, false, SPEC.valueHash(v)));
      }
    }
  }

  /** Random lines of random bytes: TAB, CR, NUL, 0xff and long lines among them. */
  private static byte[] randomInput(SplittableRandom r, int lines, int maxLine, boolean finalLf) {
    byte[] alphabet = {'\t', '\r', 0, (byte) 0xff, (byte) 0x80, 'a', 'b', ' ', '\\', 'z'};
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    for (int i = 0; i < lines; i++) {
      int len = r.nextInt(8) == 0 ? r.nextInt(maxLine) : r.nextInt(12);
      for (int j = 0; j < len; j++) {
        b.write(r.nextBoolean() ? alphabet[r.nextInt(alphabet.length)] : r.nextInt(256));
      }
      if (i < lines - 1 || finalLf) {
        b.write('\n');
      }
    }
    return b.toByteArray();
  }

  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 4, 5, 6})
  void randomBytesMatchTheOracle(long seed) throws IOException {
    SplittableRandom r = new SplittableRandom(seed);
    boolean finalLf = seed % 2 == 0;
    byte[] in = randomInput(r, 400, 300, finalLf);
    check("random-" + seed, seed, in, false, false);
    check("random-cr-" + seed, seed, in, false, true);
    check("random-gz-" + seed, seed, in, true, seed % 3 == 0);
  }

  @Test
  void emptyAndTinyInputs() throws IOException {
    check("empty", 0, new byte[0], false, false);
    check("empty-gz", 0, new byte[0], true, false);
    check("lf", 0, new byte[] {'\n'}, false, false);
    check("two-lf", 0, new byte[] {'\n', '\n'}, false, false);
    check("tab", 0, new byte[] {'\t'}, false, false);
    check("cr", 0, new byte[] {'\r'}, false, true);
    check("crlf", 0, new byte[] {'\r', '\n', 'a', '\r', '\n'}, false, true);
    check("no-lf", 0, "k\tv".getBytes(java.nio.charset.StandardCharsets.US_ASCII), false, false);
  }

  @Test
  void crlfIsDataUnlessStripped() throws IOException {
    byte[] in =
        "a\t1\r\nb\r\n\r\nc\t\r\nd\t2\r".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    check("crlf-kept", 0, in, false, false);
    check("crlf-stripped", 0, in, false, true);
    check("crlf-stripped-gz", 0, in, true, true);
  }

  @Test
  void concatenatedGzipMembersAreOneStream() throws IOException {
    byte[] a = "a\t1\nb\t2\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    byte[] b = "c\t3\nd".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    ByteArrayOutputStream both = new ByteArrayOutputStream();
    for (byte[] part : List.of(a, b)) {
      try (OutputStream o = new GZIPOutputStream(both)) {
        o.write(part);
      }
    }
    Path f = dir.resolve("members.gz");
    Files.write(f, both.toByteArray());
    byte[] plain = new byte[a.length + b.length];
    System.arraycopy(a, 0, plain, 0, a.length);
    System.arraycopy(b, 0, plain, a.length, b.length);
    List<byte[][]> want = oracle(plain, false);
    RecordTable t = read(f, false, 16, 64);
    assertThat(t.recordsRead()).isEqualTo(want.size());
    for (int i = 0; i < want.size(); i++) {
      assertThat(t.key(i)).isEqualTo(want.get(i)[0]);
      assertThat(t.value(i)).isEqualTo(want.get(i)[1]);
    }
  }

  /**
   * A gzip file whose trailer claims a wrong uncompressed size (too small, too large, absurd) is
   * read exactly as an honest one: the claim only sizes arrays, within bounds.
   */
  @Test
  void gzipTrailerSizeIsOnlyAHint() throws IOException {
    SplittableRandom r = new SplittableRandom(31);
    byte[] in = randomInput(r, 3000, 40, true);
    ByteArrayOutputStream z = new ByteArrayOutputStream();
    try (OutputStream o = new GZIPOutputStream(z)) {
      o.write(in);
    }
    byte[] gz = z.toByteArray();
    List<byte[][]> want = oracle(in, false);
    for (long claim : new long[] {in.length, 1, 64L * gz.length, 0xffff_ffffL}) {
      byte[] lie = gz.clone();
      for (int i = 0; i < 4; i++) {
        lie[lie.length - 4 + i] = (byte) (claim >>> (8 * i));
      }
      Path f = dir.resolve("claim-" + claim + ".gz");
      Files.write(f, lie);
      if (claim != in.length) {
        // GZIPInputStream checks ISIZE at the end: a wrong one is a corrupt file, reported.
        assertThatThrownBy(() -> read(f, false, FileSource.READ, FileSource.BLOCK))
            .isInstanceOf(CliException.class)
            .hasMessageStartingWith("file:" + f + ": corrupt gzip input");
        continue;
      }
      RecordTable t = read(f, false, FileSource.READ, FileSource.BLOCK);
      assertThat(t.recordsRead()).isEqualTo(want.size());
      for (int i = 0; i < want.size(); i++) {
        assertThat(t.key(i)).isEqualTo(want.get(i)[0]);
        assertThat(t.value(i)).isEqualTo(want.get(i)[1]);
      }
    }
  }

  /** Lines far longer than a block, at the real sizes: 20 MiB, then short lines, then 9 MiB. */
  @Test
  void hugeLines() throws IOException {
    SplittableRandom r = new SplittableRandom(11);
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    byte[] big = new byte[20 << 20];
    for (int i = 0; i < big.length; i++) {
      big[i] = (byte) ('a' + r.nextInt(26));
    }
    big[5] = '\t';
    b.writeBytes(big);
    b.write('\n');
    for (int i = 0; i < 1000; i++) {
      b.writeBytes(
          ("k" + i + "\tv" + i + "\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    }
    b.write(big, 1000, 9 << 20); // no TAB: all key, no final LF
    byte[] in = b.toByteArray();
    Path f = dir.resolve("huge.txt");
    Files.write(f, in);
    List<byte[][]> want = oracle(in, false);
    RecordTable t = read(f, false, FileSource.READ, FileSource.BLOCK);
    assertThat(t.recordsRead()).isEqualTo(want.size()).isEqualTo(1002);
    for (int i = 0; i < want.size(); i++) {
      assertThat(Arrays.equals(t.key(i), want.get(i)[0])).as("record %d key", i).isTrue();
      assertThat(Arrays.equals(t.value(i), want.get(i)[1])).as("record %d value", i).isTrue();
    }
  }

  /**
   * The blocks a file is read into are sized by its length: a small file takes a block of its own
   * size, and a file a little larger than a block takes a last block of what is left, not a second
   * whole one (a one-line diff allocated and zeroed 8 MiB a side, a 9 MiB file 16 MiB).
   */
  @Test
  void blocksAreSizedByTheFile() throws IOException {
    Path small = dir.resolve("small.txt");
    Files.write(small, "a\t1\nb\t2\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    RecordTable t = read(small, false, FileSource.READ, FileSource.BLOCK);
    assertThat(t.recordsRead()).isEqualTo(2);
    assertThat(t.arena().capacity()).isEqualTo(FileSource.MIN_BLOCK);

    Path noLf = dir.resolve("no-lf.txt");
    Files.write(noLf, new byte[] {'k', '\t', 'v'});
    t = read(noLf, false, FileSource.READ, FileSource.BLOCK);
    assertThat(t.value(0)).isEqualTo(new byte[] {'v'});
    assertThat(t.arena().capacity()).isEqualTo(FileSource.MIN_BLOCK);

    byte[] line =
        "key-0000000\tvalue-000000000000000000\n"
            .getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    int lines = (9 << 20) / line.length;
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    for (int i = 0; i < lines; i++) {
      b.writeBytes(line);
    }
    Path large = dir.resolve("large.txt");
    Files.write(large, b.toByteArray());
    t = read(large, false, FileSource.READ, FileSource.BLOCK);
    assertThat(t.recordsRead()).isEqualTo(lines);
    assertThat(t.arena().capacity())
        .isGreaterThanOrEqualTo(b.size())
        .isLessThan(b.size() + 2L * FileSource.READ);
  }

  @Test
  void notGzipDespiteTheName() throws IOException {
    Path f = dir.resolve("plain.gz");
    Files.write(f, "a\t1\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    assertThatThrownBy(() -> read(f, false, FileSource.READ, FileSource.BLOCK))
        .isInstanceOf(CliException.class)
        .hasMessage("file:" + f + ": corrupt gzip input (Not in GZIP format)");
  }

  /** The word-at-a-time searches agree with a byte loop at every offset and alignment. */
  @ParameterizedTest
  @ValueSource(longs = {21, 22, 23})
  void separatorSearchMatchesAByteLoop(long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    for (int trial = 0; trial < 2000; trial++) {
      byte[] b = new byte[1 + r.nextInt(40)];
      for (int i = 0; i < b.length; i++) {
        int x = r.nextInt(6);
        b[i] = x == 0 ? (byte) '\t' : x == 1 ? (byte) '\n' : (byte) r.nextInt(256);
      }
      b[b.length - 1] = '\n';
      for (int p = 0; p < b.length; p++) {
        int k = p;
        while (b[k] != '\t' && b[k] != '\n') {
          k++;
        }
        int l = p;
        while (b[l] != '\n') {
          l++;
        }
        assertThat(FileSource.keyEnd(b, p))
            .as("seed %d %s at %d", seed, Arrays.toString(b), p)
            .isEqualTo(k);
        assertThat(FileSource.lineEnd(b, p))
            .as("seed %d %s at %d", seed, Arrays.toString(b), p)
            .isEqualTo(l);
      }
    }
  }
}
