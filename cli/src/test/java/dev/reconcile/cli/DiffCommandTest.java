package dev.reconcile.cli;

import static dev.reconcile.cli.Cli.line;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.reconcile.cli.Cli.Entry;
import dev.reconcile.cli.Cli.Line;
import dev.reconcile.cli.Cli.Result;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class DiffCommandTest {
  @TempDir Path dir;

  private static final byte[] ODD = {
    0,
    1,
    13,
    27,
    92,
    127,
    (byte) 0x80,
    (byte) 0xc3,
    (byte) 0xa9,
    (byte) 0xe2,
    (byte) 0x98,
    (byte) 0x83,
    (byte) 0xff,
    (byte) 0xfe,
    ' ',
    'a',
    'b'
  };

  private static byte[] key(SplittableRandom r, boolean odd) {
    if (!odd) {
      return ("k" + r.nextLong(1L << 40)).getBytes(StandardCharsets.US_ASCII);
    }
    byte[] k = new byte[r.nextInt(1, 10)];
    for (int i = 0; i < k.length; i++) {
      k[i] = r.nextBoolean() ? ODD[r.nextInt(ODD.length)] : (byte) r.nextInt(256);
      if (k[i] == '\t' || k[i] == '\n') {
        k[i] = (byte) 0xff;
      }
    }
    return k;
  }

  private static byte[] value(SplittableRandom r, boolean odd) {
    if (r.nextInt(8) == 0) {
      return null; // a line without TAB
    }
    byte[] v = new byte[r.nextInt(odd ? 8 : 20)];
    for (int i = 0; i < v.length; i++) {
      v[i] = odd ? (byte) r.nextInt(256) : (byte) ('a' + r.nextInt(26));
      if (v[i] == '\n') {
        v[i] = '\t';
      }
    }
    return v;
  }

  /** Left and right lines with known differences: some only left, some only right, some changed. */
  private static List<List<Line>> pair(
      long seed, int common, int onlyLeft, int onlyRight, int changed, boolean odd) {
    SplittableRandom r = new SplittableRandom(seed);
    List<Line> left = new ArrayList<>();
    List<Line> right = new ArrayList<>();
    for (int i = 0; i < common; i++) {
      Line l = new Line(key(r, odd), value(r, odd));
      left.add(l);
      right.add(l);
    }
    for (int i = 0; i < onlyLeft; i++) {
      left.add(new Line(key(r, odd), value(r, odd)));
    }
    for (int i = 0; i < onlyRight; i++) {
      right.add(new Line(key(r, odd), value(r, odd)));
    }
    for (int i = 0; i < changed; i++) {
      byte[] k = key(r, odd);
      left.add(new Line(k, value(r, odd)));
      right.add(new Line(k, value(r, odd)));
    }
    shuffle(left, r);
    shuffle(right, r);
    return List.of(left, right);
  }

  private static void shuffle(List<Line> l, SplittableRandom r) {
    for (int i = l.size() - 1; i > 0; i--) {
      int j = r.nextInt(i + 1);
      Line t = l.get(i);
      l.set(i, l.get(j));
      l.set(j, t);
    }
  }

  private void check(String what, long seed, List<Line> left, List<Line> right, boolean production)
      throws Exception {
    Path a = Cli.write(dir.resolve(what + "-left.txt"), left);
    Path b = Cli.write(dir.resolve(what + "-right.txt"), right);
    List<Entry> want = Cli.expected(Cli.model(left), Cli.model(right));
    String[] args = {"diff", "file:" + a, "file:" + b};
    Result res = production ? Cli.runProduction(args) : Cli.run(args);
    assertThat(res.err())
        .as("%s seed %d: no progress output when stderr is not a terminal", what, seed)
        .doesNotContain("\r");
    assertThat(Cli.parseText(res.out()))
        .as("%s seed %d\n%s", what, seed, res.err())
        .isEqualTo(want);
    assertThat(res.status())
        .as("%s seed %d\n%s", what, seed, res.err())
        .isEqualTo(want.isEmpty() ? 0 : 1);
  }

  @Test
  void bothEmpty() throws Exception {
    check("both-empty", 0, List.of(), List.of(), false);
  }

  @Test
  void oneSideEmpty() throws Exception {
    List<List<Line>> p = pair(1, 0, 300, 0, 0, false);
    check("right-empty", 1, p.get(0), List.of(), false);
    check("left-empty", 1, List.of(), p.get(0), false);
  }

  @Test
  void identical() throws Exception {
    List<List<Line>> p = pair(2, 5000, 0, 0, 0, false);
    check("identical", 2, p.get(0), p.get(1), false);
  }

  @Test
  void oneSided() throws Exception {
    List<List<Line>> p = pair(3, 2000, 57, 0, 0, false);
    check("one-sided", 3, p.get(0), p.get(1), false);
  }

  @Test
  void everythingDifferent() throws Exception {
    List<List<Line>> p = pair(4, 0, 3000, 2500, 1000, false);
    check("all-different", 4, p.get(0), p.get(1), false);
  }

  @ParameterizedTest
  @ValueSource(longs = {5, 6, 7})
  void oddBytesInKeysAndValues(long seed) throws Exception {
    List<List<Line>> p = pair(seed, 1500, 40, 30, 20, true);
    check("odd-" + seed, seed, p.get(0), p.get(1), false);
  }

  @Test
  void emptyKeyAndKeyWithoutValue() throws Exception {
    List<Line> left = List.of(line("", null), line("a", null), line("b", ""), line("c", "x\ty"));
    List<Line> right = List.of(line("", "v"), line("a", ""), line("b", null), line("c", "x\tz"));
    // "a" and "a<TAB>" are the same record; so are "b<TAB>" and "b".
    check("empty-key", 8, left, right, false);
    Result res =
        Cli.run(
            "diff",
            "-q",
            "file:" + dir.resolve("empty-key-left.txt"),
            "file:" + dir.resolve("empty-key-right.txt"));
    assertThat(res.out()).isEqualTo("! \n! c\n");
  }

  @Test
  void duplicateLinesLastOneWins() throws Exception {
    List<Line> left =
        List.of(
            line("a", "1"),
            line("a", "1"),
            line("b", "1"),
            line("b", "2"),
            line("c", "3"),
            line("b", "3"),
            line("d", "4"),
            line("d", "4"));
    List<Line> right =
        List.of(line("a", "1"), line("b", "3"), line("c", "3"), line("d", "5"), line("c", "3"));
    check("dups", 9, left, right, false);
    Result res =
        Cli.run(
            "diff",
            "file:" + dir.resolve("dups-left.txt"),
            "file:" + dir.resolve("dups-right.txt"));
    assertThat(res.out()).isEqualTo("! d\n");
    assertThat(res.err())
        .contains(
            "reconcile: warning: file:"
                + dir.resolve("dups-left.txt")
                + ": key 'b' has 3 records with different values; the last one (record 6) wins")
        .contains(
            "dups-left.txt: 4 keys, 4 records dropped for a repeated key, 1 keys with several values")
        .contains("dups-right.txt: 4 keys, 1 records dropped for a repeated key, 10 bytes");
    assertThat(res.errLines().stream().filter(l -> l.contains("warning")).count()).isEqualTo(1);
  }

  @Test
  void carriageReturnIsDataUnlessStripped() throws Exception {
    List<Line> left = List.of(line("a", "1"), line("b\r", null), line("c", "3\r"));
    List<Line> right = List.of(line("a", "1\r"), line("b", null), line("c", "3"));
    check("cr", 10, left, right, false);
    Path a = dir.resolve("cr-left.txt");
    Path b = dir.resolve("cr-right.txt");
    assertThat(Cli.run("diff", "-q", "file:" + a, "file:" + b).out())
        .isEqualTo("! a\n> b\n< b\\r\n! c\n");
    Result stripped = Cli.run("diff", "-q", "--strip-trailing-cr", "file:" + a, "file:" + b);
    assertThat(stripped.out()).isEmpty();
    assertThat(stripped.status()).isZero();
  }

  @Test
  void lastLineWithoutNewline() throws Exception {
    Path a = dir.resolve("nonl.txt");
    Files.write(a, "a\t1\nb\t2".getBytes(StandardCharsets.US_ASCII));
    Path b = Cli.write(dir.resolve("nl.txt"), List.of(line("a", "1"), line("b", "2")));
    Result res = Cli.run("diff", "file:" + a, "file:" + b);
    assertThat(res.status()).as(res.err()).isZero();
  }

  @Test
  void gzipBySuffixAndByMagic() throws Exception {
    List<List<Line>> p = pair(11, 3000, 25, 35, 15, true);
    Path gz = Cli.writeGzip(dir.resolve("left.txt.gz"), p.get(0));
    Path magic = Cli.writeGzip(dir.resolve("right.dat"), p.get(1));
    List<Entry> want = Cli.expected(Cli.model(p.get(0)), Cli.model(p.get(1)));
    Result res = Cli.run("diff", "file:" + gz, "file:" + magic);
    assertThat(Cli.parseText(res.out())).as("seed 11\n%s", res.err()).isEqualTo(want);
    assertThat(res.status()).isEqualTo(1);
  }

  /** 10^5 lines, ~1 % differences both ways plus changed values, with the production estimator. */
  @Test
  void hundredThousandLinesWithTheProductionEstimator() throws Exception {
    long seed = 12;
    List<List<Line>> p = pair(seed, 99_000, 350, 330, 320, false);
    check("large", seed, p.get(0), p.get(1), true);
    Result res =
        Cli.runProduction(
            "diff",
            "file:" + dir.resolve("large-left.txt"),
            "file:" + dir.resolve("large-right.txt"));
    // The protocol, not a listing: fewer bytes than one side's 8-byte digests, and apart from the
    // fixed-size estimators (16 partitions) a small fraction of it.
    long bytes = Long.parseLong(res.err().replaceAll("(?s).*protocol: (\\d+) bytes.*", "$1"));
    long estimators = Long.parseLong(res.err().replaceAll("(?s).*estimators (\\d+),.*", "$1"));
    assertThat(bytes).as(res.err()).isLessThan(100_000L * 8);
    assertThat(bytes - estimators).as(res.err()).isLessThan(100_000L * 8 / 5);
    assertThat(res.err()).as(res.err()).doesNotContain(" 0 IBLT,");
  }

  @Test
  void threeFormatsAgree() throws Exception {
    long seed = 13;
    List<List<Line>> p = pair(seed, 800, 30, 20, 25, true);
    Path a = Cli.write(dir.resolve("fmt-left.txt"), p.get(0));
    Path b = Cli.write(dir.resolve("fmt-right.txt"), p.get(1));
    List<Entry> want = Cli.expected(Cli.model(p.get(0)), Cli.model(p.get(1)));
    Result text = Cli.run("diff", "--format", "text", "file:" + a, "file:" + b);
    Result json = Cli.run("diff", "--format", "json", "file:" + a, "file:" + b);
    Result ndjson = Cli.run("diff", "--format=ndjson", "file:" + a, "file:" + b);
    assertThat(List.of(text.status(), json.status(), ndjson.status())).containsOnly(1);
    assertThat(Cli.parseText(text.out())).isEqualTo(want);

    ObjectMapper m = new ObjectMapper();
    JsonNode doc = m.readTree(json.out());
    assertThat(doc.get("left").asText()).isEqualTo("file:" + a);
    assertThat(doc.get("identical").asBoolean()).isFalse();
    List<Entry> fromJson = new ArrayList<>();
    for (JsonNode e : doc.get("differences")) {
      fromJson.add(entry(e));
    }
    assertThat(fromJson).isEqualTo(want);
    long lefts = want.stream().filter(e -> e.kind() == '<').count();
    assertThat(doc.get("counts").get("left").asLong()).isEqualTo(lefts);
    assertThat(
            doc.get("counts").get("right").asLong()
                + doc.get("counts").get("both").asLong()
                + lefts)
        .isEqualTo(want.size());

    List<Entry> fromNd = new ArrayList<>();
    for (String l : ndjson.out().split("\n")) {
      fromNd.add(entry(m.readTree(l)));
    }
    assertThat(fromNd).isEqualTo(want);
  }

  private static Entry entry(JsonNode e) {
    byte[] key = Base64.getDecoder().decode(e.get("key_b64").asText());
    assertThat(e.get("key").asText()).isEqualTo(new String(key, StandardCharsets.UTF_8));
    char kind =
        switch (e.get("side").asText()) {
          case "left" -> '<';
          case "right" -> '>';
          case "both" -> '!';
          default -> throw new AssertionError("side " + e.get("side"));
        };
    return new Entry(kind, key);
  }

  @Test
  void identicalJsonDocument() throws Exception {
    Path a = Cli.write(dir.resolve("same.txt"), List.of(line("x", "1")));
    Result res = Cli.run("diff", "--format", "json", "-q", "file:" + a, "file:" + a);
    assertThat(res.status()).isZero();
    JsonNode doc = new ObjectMapper().readTree(res.out());
    assertThat(doc.get("differences").size()).isZero();
    assertThat(doc.get("identical").asBoolean()).isTrue();
    assertThat(res.err()).isEmpty();
  }

  @Test
  void estimateMatchesTheExactDifference() throws Exception {
    List<List<Line>> p = pair(14, 4000, 100, 80, 60, false);
    Path a = Cli.write(dir.resolve("est-left.txt"), p.get(0));
    Path b = Cli.write(dir.resolve("est-right.txt"), p.get(1));
    Result res = Cli.run("estimate", "--format", "json", "file:" + a, "file:" + b);
    assertThat(res.status()).as(res.err()).isEqualTo(1);
    JsonNode doc = new ObjectMapper().readTree(res.out());
    // The exact test estimator gives d exactly: one element per one-sided key, two per changed key
    // (about 100 + 80 + 2 x 60; a "changed" key may draw an equal value).
    long d = 0;
    for (Entry e : Cli.expected(Cli.model(p.get(0)), Cli.model(p.get(1)))) {
      d += e.kind() == '!' ? 2 : 1;
    }
    assertThat(d).isBetween(280L, 300L);
    assertThat(doc.get("estimated_difference").asLong()).isEqualTo(d);
    assertThat(doc.get("iblt_cells").asLong())
        .isGreaterThanOrEqualTo(doc.get("iblt_cells_wanted").asLong());
    assertThat(doc.get("iblt_bytes").asLong()).isEqualTo(doc.get("iblt_cells").asLong() * 14);
    assertThat(doc.get("partitions").asInt()).isEqualTo(16);

    Result same = Cli.run("estimate", "file:" + a, "file:" + a);
    assertThat(same.status()).isZero();
    assertThat(same.out())
        .startsWith("estimated difference: 0 elements (0 of 16 partitions differ)");
  }

  @Test
  void seedAndPartitionsDoNotChangeTheResult() throws Exception {
    List<List<Line>> p = pair(15, 3000, 40, 40, 40, true);
    Path a = Cli.write(dir.resolve("s-left.txt"), p.get(0));
    Path b = Cli.write(dir.resolve("s-right.txt"), p.get(1));
    List<Entry> want = Cli.expected(Cli.model(p.get(0)), Cli.model(p.get(1)));
    for (String[] opts :
        List.of(
            new String[] {"--seed", "99"},
            new String[] {"--partitions-log2", "0"},
            new String[] {"--partitions-log2", "8", "--iblt-max-log2", "2"})) {
      List<String> args = new ArrayList<>(List.of("diff", "-q"));
      args.addAll(List.of(opts));
      args.addAll(List.of("file:" + a, "file:" + b));
      Result res = Cli.run(args.toArray(String[]::new));
      assertThat(Cli.parseText(res.out())).as("%s: %s", args, res.err()).isEqualTo(want);
    }
  }

  @Test
  void modelIsLastWins() {
    TreeMap<byte[], byte[]> m = Cli.model(List.of(line("a", "1"), line("a", "2")));
    assertThat(new String(m.firstEntry().getValue(), StandardCharsets.UTF_8)).isEqualTo("2");
  }
}
