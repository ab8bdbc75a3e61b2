package dev.reconcile.cli;

import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.ExactEstimator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.GZIPOutputStream;
import picocli.CommandLine;

/** Test support: runs the command in-process and computes expected differences independently. */
final class Cli {
  static final Comparator<byte[]> UNSIGNED = Arrays::compareUnsigned;

  private Cli() {}

  /** Exit status, stdout, stderr of one in-process run. */
  record Result(int status, String out, String err) {
    List<String> errLines() {
      return err.isEmpty() ? List.of() : List.of(err.split("\n"));
    }
  }

  /** Runs with the exact test estimator (fast; the estimator is not what such tests test). */
  static Result run(String... args) {
    return run(ExactEstimator.factory(1.0), args);
  }

  /** Runs with the production estimator, as {@code java -jar} would. */
  static Result runProduction(String... args) {
    return run(new ReconcileCommand(), args);
  }

  static Result run(EstimatorFactory f, String... args) {
    return run(new ReconcileCommand(f), args);
  }

  private static Result run(ReconcileCommand command, String... args) {
    CommandLine cl = ReconcileCommand.commandLine(command);
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    int status = cl.execute(args);
    return new Result(status, out.toString(), err.toString());
  }

  /** One input line: key, and value or null for a line without TAB. */
  record Line(byte[] key, byte[] value) {}

  /** The records a list of lines stands for: last value of each key wins, no value = empty. */
  static TreeMap<byte[], byte[]> model(List<Line> lines) {
    TreeMap<byte[], byte[]> m = new TreeMap<>(UNSIGNED);
    for (Line l : lines) {
      m.put(l.key(), l.value() == null ? new byte[0] : l.value());
    }
    return m;
  }

  /** One expected or actual output entry. */
  record Entry(char kind, byte[] key) {
    @Override
    public boolean equals(Object o) {
      return o instanceof Entry e && e.kind == kind && Arrays.equals(e.key, key);
    }

    @Override
    public int hashCode() {
      return kind * 31 + Arrays.hashCode(key);
    }

    @Override
    public String toString() {
      return kind + " " + KeyEscaper.escape(key, 0, key.length);
    }
  }

  /** The true difference, computed from the two models by a sorted merge. */
  static List<Entry> expected(Map<byte[], byte[]> left, Map<byte[], byte[]> right) {
    TreeMap<byte[], Character> all = new TreeMap<>(UNSIGNED);
    for (Map.Entry<byte[], byte[]> e : left.entrySet()) {
      byte[] rv = right.get(e.getKey());
      if (rv == null) {
        all.put(e.getKey(), '<');
      } else if (!Arrays.equals(rv, e.getValue())) {
        all.put(e.getKey(), '!');
      }
    }
    for (byte[] k : right.keySet()) {
      if (!left.containsKey(k)) {
        all.put(k, '>');
      }
    }
    List<Entry> out = new ArrayList<>();
    all.forEach((k, c) -> out.add(new Entry(c, k)));
    return out;
  }

  /** Parses text output: "K ESCAPED-KEY" per line. */
  static List<Entry> parseText(String out) {
    List<Entry> r = new ArrayList<>();
    if (out.isEmpty()) {
      return r;
    }
    for (String line : out.split("\n", -1)) {
      if (line.isEmpty()) {
        continue;
      }
      if (line.length() < 2 || line.charAt(1) != ' ') {
        throw new AssertionError("malformed output line: " + line);
      }
      r.add(new Entry(line.charAt(0), KeyEscaper.unescape(line.substring(2))));
    }
    return r;
  }

  static byte[] bytes(List<Line> lines, boolean finalNewline) {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    for (int i = 0; i < lines.size(); i++) {
      Line l = lines.get(i);
      b.writeBytes(l.key());
      if (l.value() != null) {
        b.write('\t');
        b.writeBytes(l.value());
      }
      if (i < lines.size() - 1 || finalNewline) {
        b.write('\n');
      }
    }
    return b.toByteArray();
  }

  static Path write(Path p, List<Line> lines) throws IOException {
    Files.write(p, bytes(lines, true));
    return p;
  }

  static Path writeGzip(Path p, List<Line> lines) throws IOException {
    try (OutputStream o = new GZIPOutputStream(Files.newOutputStream(p))) {
      o.write(bytes(lines, true));
    }
    return p;
  }

  static Line line(String k, String v) {
    return new Line(
        k.getBytes(java.nio.charset.StandardCharsets.UTF_8),
        v == null ? null : v.getBytes(java.nio.charset.StandardCharsets.UTF_8));
  }
}
