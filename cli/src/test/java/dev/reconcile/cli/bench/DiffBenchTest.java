package dev.reconcile.cli.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The diff benchmark's own parts: the correctness check and the generated data. */
class DiffBenchTest {
  @TempDir Path dir;

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  @Test
  void commOutputBecomesDiffLinesSortedByKey() {
    // comm -3 of "a 1, b 2, c 3" and "b 9, c 3, d 4": sorted whole lines, right ones after a TAB.
    byte[] comm = b("a\t1\nb\t2\n\tb\t9\n\td\t4\n");
    List<byte[]> want = DiffBench.expectedFromComm(comm);
    assertThat(want.stream().map(x -> new String(x, StandardCharsets.US_ASCII)))
        .containsExactly("< a", "! b", "> d");
    assertThat(DiffBench.matches(want, b("< a\n! b\n> d\n"))).isTrue();
    assertThat(DiffBench.matches(want, b("< a\n! b\n"))).isFalse();
    assertThat(DiffBench.matches(want, b("< a\n! b\n> d\n> e\n"))).isFalse();
    assertThat(DiffBench.matches(want, b("< a\n> b\n> d\n"))).isFalse();
    assertThat(DiffBench.matches(want, b("< a\n! b\n> d"))).isFalse();
    assertThat(DiffBench.matches(List.of(), b(""))).isTrue();
  }

  @Test
  void generatedFilesHaveUniqueKeysAndTheAskedDifference() throws IOException {
    for (boolean gzip : List.of(false, true)) {
      Path a = dir.resolve("a" + gzip);
      Path c = dir.resolve("b" + gzip);
      DiffBench.generate(new DiffBench.Dataset("x", 30_000, gzip), 0.1, 5, a, c);
      Map<String, String> left = read(a, gzip);
      Map<String, String> right = read(c, gzip);
      int onlyLeft = 0;
      int onlyRight = 0;
      int changed = 0;
      Set<String> all = new HashSet<>(left.keySet());
      all.addAll(right.keySet());
      for (String k : all) {
        String l = left.get(k);
        String r = right.get(k);
        if (r == null) {
          onlyLeft++;
        } else if (l == null) {
          onlyRight++;
        } else if (!l.equals(r)) {
          changed++;
        }
      }
      assertThat(all).hasSize(30_000);
      // Each kind has probability 1/30: 1000 expected, sd ~31.
      for (int x : new int[] {onlyLeft, onlyRight, changed}) {
        assertThat(x).as("gzip %s", gzip).isBetween(850, 1150);
      }
    }
  }

  private static Map<String, String> read(Path p, boolean gzip) throws IOException {
    byte[] bytes;
    try (InputStream in = Files.newInputStream(p)) {
      bytes = gzip ? new GZIPInputStream(in).readAllBytes() : in.readAllBytes();
    }
    Map<String, String> m = new HashMap<>();
    for (String line : new String(bytes, StandardCharsets.US_ASCII).split("\n")) {
      String[] kv = line.split("\t", 2);
      assertThat(m.put(kv[0], kv[1])).as("key %s repeated", kv[0]).isNull();
    }
    return m;
  }
}
