package dev.reconcile.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.cli.Cli.Result;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every bad input: exit status 2, nothing on stdout, one line on stderr naming the input. */
class BadInputTest {
  @TempDir Path dir;
  private Path good;

  @BeforeEach
  void goodFile() throws Exception {
    good = Cli.write(dir.resolve("good.txt"), List.of(Cli.line("a", "1")));
  }

  private static void trouble(String expected, String... args) {
    for (String cmd : List.of("diff", "estimate")) {
      String[] a = args.clone();
      a[0] = cmd;
      Result res = Cli.run(a);
      assertThat(res.status()).as("%s -> %s", Arrays.toString(a), res.err()).isEqualTo(2);
      assertThat(res.out()).as(Arrays.toString(a)).isEmpty();
      assertThat(res.errLines()).as(Arrays.toString(a)).hasSize(1);
      assertThat(res.err()).as(Arrays.toString(a)).contains(expected);
    }
  }

  @Test
  void missingFile() {
    Path missing = dir.resolve("nope/missing.txt");
    trouble(
        "reconcile: file:" + missing + ": No such file or directory",
        "diff",
        "file:" + missing,
        "file:" + good);
    trouble(
        "reconcile: file:" + missing + ": No such file or directory",
        "diff",
        "file:" + good,
        "file:" + missing);
  }

  @Test
  void directoryAsFile() {
    trouble("reconcile: file:" + dir + ": Is a directory", "diff", "file:" + dir, "file:" + good);
  }

  @Test
  void directoryThatIsNotRocksDb() throws Exception {
    Path empty = Files.createDirectory(dir.resolve("empty"));
    trouble(
        "reconcile: rocksdb:" + empty + ": not a RocksDB database (no CURRENT file)",
        "diff",
        "rocksdb:" + empty,
        "file:" + good);
    Path bogus = Files.createDirectory(dir.resolve("bogus"));
    Files.writeString(bogus.resolve("CURRENT"), "MANIFEST-000099\n");
    trouble(
        "reconcile: rocksdb:" + bogus + ": cannot read RocksDB (",
        "diff",
        "rocksdb:" + bogus,
        "file:" + good);
    trouble(
        "reconcile: rocksdb:" + good + ": Not a directory",
        "diff",
        "file:" + good,
        "rocksdb:" + good);
    trouble(
        "reconcile: rocksdb:" + dir.resolve("x") + ": No such file or directory",
        "diff",
        "file:" + good,
        "rocksdb:" + dir.resolve("x"));
  }

  @Test
  void corruptGzip() throws Exception {
    Path garbage = dir.resolve("garbage.gz");
    Files.write(garbage, "this is not gzip\n".getBytes(StandardCharsets.US_ASCII));
    trouble(
        "reconcile: file:" + garbage + ": corrupt gzip input",
        "diff",
        "file:" + garbage,
        "file:" + good);

    ByteArrayOutputStream b = new ByteArrayOutputStream();
    try (GZIPOutputStream g = new GZIPOutputStream(b)) {
      for (int i = 0; i < 10_000; i++) {
        g.write(("key" + i + "\tvalue" + i + "\n").getBytes(StandardCharsets.US_ASCII));
      }
    }
    byte[] full = b.toByteArray();
    Path truncated = dir.resolve("truncated.gz");
    Files.write(truncated, Arrays.copyOf(full, full.length / 2));
    trouble(
        "reconcile: file:" + truncated + ": corrupt gzip input",
        "diff",
        "file:" + good,
        "file:" + truncated);

    byte[] flipped = full.clone();
    for (int i = 20; i < flipped.length - 8; i += 7) {
      flipped[i] ^= 0x5a;
    }
    Path corrupt = dir.resolve("corrupt.dat"); // gzip by magic bytes, no suffix
    Files.write(corrupt, flipped);
    trouble(
        "reconcile: file:" + corrupt + ": corrupt gzip input",
        "diff",
        "file:" + corrupt,
        "file:" + good);

    Path empty = dir.resolve("empty.gz");
    Files.write(empty, new byte[0]);
    trouble(
        "reconcile: file:" + empty + ": corrupt gzip input",
        "diff",
        "file:" + empty,
        "file:" + good);
  }

  @Test
  void unknownOrUnsupportedSide() {
    trouble(
        "reconcile: s3:bucket/x: unknown side (expected file:PATH, rocksdb:PATH or HOST:PORT of an agent)",
        "diff",
        "s3:bucket/x",
        "file:" + good);
    trouble(
        "reconcile: plain.txt: unknown side (expected file:PATH, rocksdb:PATH or HOST:PORT of an agent;"
            + " did you mean file:plain.txt?)",
        "diff",
        "file:" + good,
        "plain.txt");
    trouble(
        "reconcile: agent:/var/lib/reconcile: expected agent:HOST:PORT (the agent's HTTP address)",
        "diff",
        "agent:/var/lib/reconcile",
        "file:" + good);
    // Nothing listens on port 1: the unreachable agent is named.
    trouble("reconcile: agent:127.0.0.1:1", "diff", "file:" + good, "127.0.0.1:1");
    trouble("reconcile: file:: empty path", "diff", "file:", "file:" + good);
  }

  @Test
  void wrongNumberOfArguments() {
    trouble("Missing required parameter: 'RIGHT'", "diff", "file:" + good);
    // Without any argument: the error, then the command's usage.
    for (String cmd : List.of("diff", "estimate")) {
      Result res = Cli.run(cmd);
      assertThat(res.status()).isEqualTo(2);
      assertThat(res.out()).isEmpty();
      assertThat(res.errLines().get(0)).contains("Missing required parameters: 'LEFT', 'RIGHT'");
      assertThat(res.err()).contains("Usage: reconcile " + cmd);
    }
    trouble(
        "Unmatched argument at index 3: 'file:third'",
        "diff",
        "file:" + good,
        "file:" + good,
        "file:third");
  }

  @Test
  void badOptions() {
    Result res = Cli.run("diff", "--format", "xml", "file:" + good, "file:" + good);
    assertThat(res.status()).isEqualTo(2);
    assertThat(res.errLines()).hasSize(1);
    assertThat(res.err())
        .startsWith("reconcile diff: Invalid value for option '--format'")
        .contains("'xml'");
    trouble(
        "partitions log2 99 outside [0, 16]",
        "diff",
        "--partitions-log2",
        "99",
        "file:" + good,
        "file:" + good);
    trouble("'--seed'", "diff", "--seed", "ten", "file:" + good, "file:" + good);
  }

  @Test
  void plainCommandLineGivesTheSameStatuses() throws Exception {
    // Without the handlers ReconcileCommand.commandLine installs: statuses still follow diff(1).
    Path other = Cli.write(dir.resolve("other.txt"), List.of(Cli.line("a", "2")));
    java.io.StringWriter err = new java.io.StringWriter();
    picocli.CommandLine cl = new picocli.CommandLine(new ReconcileCommand());
    cl.setOut(new java.io.PrintWriter(new java.io.StringWriter()));
    cl.setErr(new java.io.PrintWriter(err, true));
    assertThat(cl.execute("diff", "-q", "file:" + good, "file:" + good)).isZero();
    assertThat(cl.execute("diff", "-q", "file:" + good, "file:" + other)).isEqualTo(1);
    assertThat(cl.execute("diff", "file:" + good, "file:" + dir.resolve("missing"))).isEqualTo(2);
    assertThat(err.toString())
        .isEqualTo("reconcile: file:" + dir.resolve("missing") + ": No such file or directory\n");
    assertThat(cl.execute("diff", "file:" + good)).isEqualTo(2);
  }

  @Test
  void helpIsNotTrouble() {
    Result res = Cli.run("diff", "--help");
    assertThat(res.status()).isZero();
    assertThat(res.out()).contains("Usage: reconcile diff").contains("--format").contains("--seed");
    assertThat(Cli.run("help", "estimate").out()).contains("Usage: reconcile estimate");
  }

  @Test
  void noOrUnknownSubcommand() {
    for (String[] a : List.of(new String[0], new String[] {"frobnicate", "x"})) {
      Result res = Cli.run(a);
      assertThat(res.status()).as(Arrays.toString(a)).isEqualTo(2);
      assertThat(res.errLines()).as(res.err()).hasSize(1);
    }
  }
}
