package dev.reconcile.cli;

import static dev.reconcile.cli.Cli.line;
import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.cli.Cli.Entry;
import dev.reconcile.cli.Cli.Line;
import dev.reconcile.cli.Cli.Result;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.FlushOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;

class RocksDbSideTest {
  @TempDir Path dir;

  private static List<Line> records(long seed, int n) {
    SplittableRandom r = new SplittableRandom(seed);
    List<Line> l = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      byte[] k = new byte[r.nextInt(1, 12)];
      byte[] v = new byte[r.nextInt(0, 20)];
      for (int j = 0; j < k.length; j++) {
        k[j] = (byte) r.nextInt(256);
        if (k[j] == '\t' || k[j] == '\n') {
          k[j] = 0;
        }
      }
      for (int j = 0; j < v.length; j++) {
        v[j] = (byte) r.nextInt(256);
        if (v[j] == '\n') {
          v[j] = '\t';
        }
      }
      l.add(new Line(k, v));
    }
    return l;
  }

  /** Writes with the Java API: half flushed to SST files, half left in the WAL. */
  private static Path javaDb(Path p, List<Line> lines) throws Exception {
    RocksDB.loadLibrary();
    try (Options o =
            new Options()
                .setCreateIfMissing(true)
                .setTableFormatConfig(new BlockBasedTableConfig().setFormatVersion(5));
        RocksDB db = RocksDB.open(o, p.toString());
        FlushOptions f = new FlushOptions().setWaitForFlush(true)) {
      for (int i = 0; i < lines.size(); i++) {
        db.put(lines.get(i).key(), lines.get(i).value());
        if (i == lines.size() / 2) {
          db.flush(f);
        }
      }
    }
    return p;
  }

  /** Name, size, modification time and SHA-256 of every file under {@code p}. */
  private static TreeMap<String, String> snapshot(Path p) throws Exception {
    TreeMap<String, String> m = new TreeMap<>();
    try (Stream<Path> s = Files.walk(p)) {
      for (Path f : (Iterable<Path>) s::iterator) {
        if (Files.isRegularFile(f)) {
          byte[] sha = MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(f));
          m.put(
              p.relativize(f).toString(),
              Files.size(f)
                  + " "
                  + Files.getLastModifiedTime(f)
                  + " "
                  + HexFormat.of().formatHex(sha));
        }
      }
    }
    return m;
  }

  @Test
  void javaApiDatabaseAgainstFileIsReadOnly() throws Exception {
    long seed = 21;
    List<Line> common = records(seed, 3000);
    List<Line> left = new ArrayList<>(common);
    left.addAll(records(seed + 1, 40));
    List<Line> right = new ArrayList<>(common);
    right.addAll(records(seed + 2, 30));
    for (int i = 0; i < 25; i++) { // changed values
      right.add(
          new Line(
              common.get(i).key(),
              ("changed" + i).getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    }
    Path db = javaDb(dir.resolve("db"), left);
    Path file = Cli.write(dir.resolve("right.txt"), right);
    TreeMap<String, String> before = snapshot(db);
    List<Entry> want = Cli.expected(Cli.model(left), Cli.model(right));

    Result res = Cli.run("diff", "rocksdb:" + db, "file:" + file);
    assertThat(Cli.parseText(res.out())).as("seed %d\n%s", seed, res.err()).isEqualTo(want);
    assertThat(res.status()).isEqualTo(1);
    assertThat(res.err()).contains("rocksdb:" + db + ": " + Cli.model(left).size() + " keys");

    Result same = Cli.run("diff", "rocksdb:" + db, "rocksdb:" + db);
    assertThat(same.status()).as(same.err()).isZero();
    assertThat(same.out()).isEmpty();
    assertThat(snapshot(db)).as("the database directory is unchanged").isEqualTo(before);
  }

  private static boolean ldbAvailable() {
    try {
      Process p = new ProcessBuilder("ldb", "--help").redirectErrorStream(true).start();
      p.getInputStream().readAllBytes();
      return p.waitFor(30, TimeUnit.SECONDS);
    } catch (IOException | InterruptedException e) {
      return false;
    }
  }

  private static void ldb(String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("ldb"));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out =
        new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("%s: %s", cmd, out).isZero();
  }

  private static String hex(byte[] b) {
    return "0x" + HexFormat.of().withUpperCase().formatHex(b);
  }

  @Test
  void databaseWrittenByLdb() throws Exception {
    Assumptions.assumeTrue(
        ldbAvailable(),
        "ldb is not on PATH (Debian package rocksdb-tools): skipping the ldb-written database test");
    long seed = 22;
    Path db = dir.resolve("ldb");
    ldb("--db=" + db, "--create_if_missing", "put", "plain-key", "plain value");
    List<Line> batch = records(seed, 200);
    List<String> args = new ArrayList<>(List.of("--db=" + db, "--hex", "batchput"));
    for (Line l : batch) {
      args.add(hex(l.key()));
      args.add(l.value().length == 0 ? "0x" : hex(l.value()));
    }
    ldb(args.toArray(String[]::new));
    List<Line> inDb = new ArrayList<>(List.of(line("plain-key", "plain value")));
    inDb.addAll(batch);

    List<Line> file = new ArrayList<>(batch.subList(0, 150));
    file.add(line("plain-key", "another value"));
    file.add(line("only-in-file", "x"));
    Path f = Cli.write(dir.resolve("f.txt"), file);
    TreeMap<String, String> before = snapshot(db);
    Result res = Cli.run("diff", "rocksdb:" + db, "file:" + f);
    assertThat(Cli.parseText(res.out()))
        .as("seed %d\n%s", seed, res.err())
        .isEqualTo(Cli.expected(Cli.model(inDb), Cli.model(file)));
    assertThat(res.out()).contains("! plain-key\n").contains("> only-in-file\n");
    assertThat(res.status()).isEqualTo(1);
    assertThat(snapshot(db)).as("the ldb database is unchanged").isEqualTo(before);

    // The same records written by the Java API: identical.
    Path jdb = javaDb(dir.resolve("java"), inDb);
    Result same = Cli.run("diff", "rocksdb:" + db, "rocksdb:" + jdb);
    assertThat(same.status()).as(same.out() + same.err()).isZero();
  }
}
