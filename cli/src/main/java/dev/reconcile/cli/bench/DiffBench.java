package dev.reconcile.cli.bench;

import dev.reconcile.cli.AgentJvm;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.GZIPOutputStream;

/**
 * The one-shot {@code reconcile diff} of two files against the Unix way of doing the same: two
 * {@code LC_ALL=C sort} running at once, then {@code LC_ALL=C comm -3}. Every command is a real
 * process, timed from start to exit (wall clock), on the same generated files, in alternating
 * order: trial {@code t} starts with command {@code t mod k}, so that a change of machine load
 * falls on all of them alike.
 *
 * <p>Commands: the baseline ({@code sort} + {@code comm}; for gzip input each {@code sort} reads
 * from {@code gzip -dc}); {@code bin/reconcile diff} (the launcher: JVM options for one-shot
 * commands and its class-data sharing archive) and the same with {@code RECONCILE_CDS=0} (no
 * archive), when the launcher is found beside the jar; {@code java -jar reconcile.jar diff} with no
 * options. An untimed first round warms the page cache and lets the launcher make its archive.
 *
 * <p>Correctness is checked on every reconcile run, element by element: the baseline's output
 * (left-only and right-only lines; a key in both is a changed one, {@code !}) is turned into the
 * list of entries reconcile must print, sorted by key, and reconcile's text output is compared with
 * it line by line. A run is correct when both lists have the same length and every line matches.
 *
 * <p>Datasets: {@code tsv}, lines {@code user:NNNNNNNNNN<TAB>16 hex digits} (the keys of a
 * bijective permutation, so no key repeats), and {@code pypi-gz}, gzip-compressed lines {@code
 * package-name<TAB>version}. In both, each key is with probability {@code differ / 3} only left,
 * only right, or on both sides with a changed value.
 */
public final class DiffBench {
  private DiffBench() {}

  static final String BASELINE = "sort+comm";
  static final String LAUNCHER = "bin/reconcile";
  static final String LAUNCHER_NO_CDS = "bin/reconcile (no CDS)";
  static final String JAVA_JAR = "java -jar";

  /** One dataset to compare on. */
  public record Dataset(String name, long lines, boolean gzip) {}

  /** What to run. {@code launcher} may be null (then only {@code java -jar} runs). */
  public record Config(
      List<Dataset> datasets,
      double differ,
      int trials,
      long seed,
      Path jar,
      Path launcher,
      Path work,
      Path out) {}

  /** Medians over the trials of one command on one dataset. */
  public record Summary(
      String dataset,
      long lines,
      long bytesPerSide,
      String command,
      int trials,
      double wallMillisMedian,
      double baselineMillisMedian,
      double ratio,
      int correctRuns,
      long differences,
      double maxRssMegabytesMedian) {}

  private static final Pattern TIME =
      Pattern.compile(
          "time: left ([0-9.]+) s, right ([0-9.]+) s .*reconcile ([0-9.]+) s, keys and output"
              + " ([0-9.]+) s, total ([0-9.]+) s");

  public static List<Summary> run(Config c, Consumer<String> log) throws Exception {
    List<Summary> result = new ArrayList<>();
    Path timeBin = Path.of("/usr/bin/time");
    boolean rss = Files.isExecutable(timeBin);
    try (Csv csv =
            new Csv(
                c.out().resolve("diff-trials.csv"),
                "dataset",
                "lines",
                "trial",
                "command",
                "wall_ms",
                "exit_status",
                "correct",
                "max_rss_mb",
                "left_s",
                "right_s",
                "reconcile_s",
                "output_s",
                "total_s");
        Csv sum =
            new Csv(
                c.out().resolve("diff-summary.csv"),
                "dataset",
                "lines",
                "bytes_per_side",
                "command",
                "trials",
                "wall_ms_median",
                "baseline_ms_median",
                "ratio",
                "target_ratio",
                "meets_target",
                "correct_runs",
                "differences",
                "max_rss_mb_median")) {
      for (Dataset d : c.datasets()) {
        Path dir = c.work().resolve("diff-" + d.name());
        Files.createDirectories(dir);
        String ext = d.gzip() ? ".tsv.gz" : ".tsv";
        Path a = dir.resolve("left" + ext);
        Path b = dir.resolve("right" + ext);
        log.accept("diff: generating " + d.lines() + " lines per side (" + d.name() + ")");
        generate(d, c.differ(), c.seed(), a, b);
        long bytes = (Files.size(a) + Files.size(b)) / 2;
        List<Command> commands = new ArrayList<>();
        commands.add(baseline(d.gzip(), a, b, dir));
        if (c.launcher() != null) {
          commands.add(reconcile(LAUNCHER, List.of(c.launcher().toString()), Map.of(), a, b, dir));
          commands.add(
              reconcile(
                  LAUNCHER_NO_CDS,
                  List.of(c.launcher().toString()),
                  Map.of("RECONCILE_CDS", "0"),
                  a,
                  b,
                  dir));
        }
        commands.add(
            reconcile(
                JAVA_JAR,
                List.of(AgentJvm.JAVA.toString(), "-jar", c.jar().toString()),
                Map.of(),
                a,
                b,
                dir));
        int k = commands.size();
        double[][] wall = new double[k][c.trials()];
        double[][] mem = new double[k][c.trials()];
        int[] correct = new int[k];
        List<byte[]> expected = null;
        for (int t = -1; t < c.trials(); t++) {
          for (int j = 0; j < k; j++) {
            Command cmd = commands.get(t < 0 ? j : (t + j) % k);
            Run r = cmd.run(rss ? timeBin : null);
            if (cmd.name.equals(BASELINE)) {
              if (r.status != 0) {
                throw new IllegalStateException(
                    "sort + comm failed (status " + r.status + "): " + r.stderr);
              }
              List<byte[]> e = expectedFromComm(Files.readAllBytes(cmd.stdout));
              if (expected != null && !sameLines(expected, e)) {
                throw new IllegalStateException("sort + comm gave two different answers");
              }
              expected = e;
            }
            if (t < 0) {
              continue; // warm-up round
            }
            int i = commands.indexOf(cmd);
            wall[i][t] = r.millis;
            mem[i][t] = r.maxRssMegabytes;
            boolean ok = true;
            double[] phases = new double[5];
            Arrays.fill(phases, Double.NaN);
            if (!cmd.name.equals(BASELINE)) {
              ok = r.status == 1 && matches(expected, Files.readAllBytes(cmd.stdout));
              if (r.status == 2) {
                log.accept("diff: " + cmd.name + " failed: " + r.stderr.strip());
              }
              Matcher m = TIME.matcher(r.stderr);
              if (m.find()) {
                for (int p = 0; p < 5; p++) {
                  phases[p] = Double.parseDouble(m.group(p + 1));
                }
              }
              if (ok) {
                correct[i]++;
              }
            }
            csv.row(
                d.name(),
                d.lines(),
                t,
                cmd.name,
                r.millis,
                r.status,
                ok,
                r.maxRssMegabytes,
                phases[0],
                phases[1],
                phases[2],
                phases[3],
                phases[4]);
          }
          if (t >= 0) {
            StringBuilder line = new StringBuilder("diff " + d.name() + " trial " + t + ":");
            for (int i = 0; i < k; i++) {
              line.append(
                  String.format(Locale.ROOT, " %s %.0f ms;", commands.get(i).name, wall[i][t]));
            }
            log.accept(line.toString());
          }
        }
        double base = Medians.of(wall[0]);
        for (int i = 0; i < k; i++) {
          Command cmd = commands.get(i);
          double med = Medians.of(wall[i]);
          boolean isBase = cmd.name.equals(BASELINE);
          Summary s =
              new Summary(
                  d.name(),
                  d.lines(),
                  bytes,
                  cmd.name,
                  c.trials(),
                  med,
                  base,
                  med / base,
                  isBase ? c.trials() : correct[i],
                  expected.size(),
                  rss ? Medians.of(mem[i]) : Double.NaN);
          result.add(s);
          sum.row(
              d.name(),
              d.lines(),
              bytes,
              cmd.name,
              c.trials(),
              med,
              base,
              med / base,
              isBase ? Double.NaN : 1.5,
              isBase ? "" : Boolean.toString(med / base <= 1.5),
              s.correctRuns(),
              s.differences(),
              s.maxRssMegabytesMedian());
        }
        for (Command cmd : commands) {
          Files.deleteIfExists(cmd.stdout);
          Files.deleteIfExists(cmd.stderr);
        }
        Files.deleteIfExists(dir.resolve("left.sorted"));
        Files.deleteIfExists(dir.resolve("right.sorted"));
        Files.deleteIfExists(dir.resolve("rss"));
        Files.deleteIfExists(a);
        Files.deleteIfExists(b);
        Files.deleteIfExists(dir);
      }
    }
    return result;
  }

  // ------------------------------------------------------------------------------ commands

  private record Run(int status, double millis, double maxRssMegabytes, String stderr) {}

  /** A command line whose stdout and stderr go to files in the dataset's folder. */
  private record Command(
      String name, List<String> argv, Map<String, String> env, Path stdout, Path stderr) {
    Run run(Path timeBin) throws IOException, InterruptedException {
      List<String> cmd = new ArrayList<>();
      Path rss = stdout.resolveSibling("rss");
      if (timeBin != null) {
        cmd.addAll(List.of(timeBin.toString(), "-f", "%M", "-o", rss.toString()));
      }
      cmd.addAll(argv);
      long t0 = System.nanoTime();
      ProcessBuilder pb = new ProcessBuilder(cmd);
      pb.environment().putAll(env);
      Process p =
          pb.redirectOutput(stdout.toFile())
              .redirectError(stderr.toFile())
              .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
              .start();
      if (!p.waitFor(30, TimeUnit.MINUTES)) {
        p.destroyForcibly();
        throw new IllegalStateException(name + " did not finish in 30 minutes");
      }
      double ms = (System.nanoTime() - t0) / 1e6;
      double mb = Double.NaN;
      if (timeBin != null && Files.isRegularFile(rss)) {
        List<String> l = Files.readAllLines(rss);
        String last = l.isEmpty() ? "" : l.get(l.size() - 1).strip();
        if (last.matches("[0-9]+")) {
          mb = Long.parseLong(last) / 1024.0;
        }
      }
      return new Run(p.exitValue(), ms, mb, Files.readString(stderr, StandardCharsets.UTF_8));
    }
  }

  private static Command baseline(boolean gzip, Path a, Path b, Path dir) {
    String sortA = gzip ? "gzip -dc \"$1\" | LC_ALL=C sort" : "LC_ALL=C sort \"$1\"";
    String sortB = gzip ? "gzip -dc \"$2\" | LC_ALL=C sort" : "LC_ALL=C sort \"$2\"";
    String script =
        "("
            + sortA
            + " > \"$3/left.sorted\") & ("
            + sortB
            + " > \"$3/right.sorted\") & wait; LC_ALL=C comm -3 \"$3/left.sorted\""
            + " \"$3/right.sorted\"";
    return new Command(
        BASELINE,
        List.of("bash", "-c", script, "bash", a.toString(), b.toString(), dir.toString()),
        Map.of(),
        dir.resolve("baseline.out"),
        dir.resolve("baseline.err"));
  }

  private static Command reconcile(
      String name, List<String> prefix, Map<String, String> env, Path a, Path b, Path dir) {
    List<String> argv = new ArrayList<>(prefix);
    argv.addAll(List.of("diff", "file:" + a, "file:" + b));
    String file = name.replaceAll("[^A-Za-z]+", "-");
    return new Command(name, argv, env, dir.resolve(file + ".out"), dir.resolve(file + ".err"));
  }

  // ------------------------------------------------------------------------------ correctness

  /**
   * The lines {@code reconcile diff} must print, from the output of {@code comm -3}: a line without
   * leading TAB is only left, one with a TAB only right; the key is the line up to its first TAB. A
   * key on both lists is changed ({@code !}). Sorted by key bytes (unsigned), as diff prints them.
   */
  static List<byte[]> expectedFromComm(byte[] comm) {
    TreeMap<byte[], Character> kinds = new TreeMap<>(Arrays::compareUnsigned);
    int p = 0;
    while (p < comm.length) {
      int end = p;
      while (end < comm.length && comm[end] != '\n') {
        end++;
      }
      boolean right = comm[p] == '\t';
      int k = right ? p + 1 : p;
      int tab = k;
      while (tab < end && comm[tab] != '\t') {
        tab++;
      }
      byte[] key = Arrays.copyOfRange(comm, k, tab);
      Character was = kinds.get(key);
      kinds.put(key, was == null ? (right ? '>' : '<') : '!');
      p = end + 1;
    }
    List<byte[]> out = new ArrayList<>(kinds.size());
    for (Map.Entry<byte[], Character> e : kinds.entrySet()) {
      byte[] key = e.getKey();
      for (byte x : key) {
        if (x < 0x20 || x > 0x7e || x == '\\') {
          throw new IllegalStateException("generated key needs escaping: " + Arrays.toString(key));
        }
      }
      byte[] line = new byte[key.length + 2];
      line[0] = (byte) e.getValue().charValue();
      line[1] = ' ';
      System.arraycopy(key, 0, line, 2, key.length);
      out.add(line);
    }
    return out;
  }

  /** True when {@code output}'s lines are exactly {@code expected}, in order. */
  static boolean matches(List<byte[]> expected, byte[] output) {
    int p = 0;
    for (byte[] want : expected) {
      int end = p;
      while (end < output.length && output[end] != '\n') {
        end++;
      }
      if (end == output.length || !Arrays.equals(want, 0, want.length, output, p, end)) {
        return false;
      }
      p = end + 1;
    }
    return p == output.length;
  }

  private static boolean sameLines(List<byte[]> a, List<byte[]> b) {
    if (a.size() != b.size()) {
      return false;
    }
    for (int i = 0; i < a.size(); i++) {
      if (!Arrays.equals(a.get(i), b.get(i))) {
        return false;
      }
    }
    return true;
  }

  // ------------------------------------------------------------------------------ data

  private static final String[] SYLLABLES = {
    "ba", "be", "bi", "bo", "bu", "da", "de", "di", "do", "du", "fa", "fe", "fi", "fo", "ga", "ge",
    "go", "ka", "ke", "ki", "ko", "la", "le", "li", "lo", "lu", "ma", "me", "mi", "mo", "na", "ne",
    "ni", "no", "pa", "pe", "pi", "po", "ra", "re", "ri", "ro", "sa", "se", "si", "so", "ta", "te",
    "ti", "to", "va", "ve", "vi", "vo", "xa", "xe", "za", "ze", "zi", "zo", "py", "ly", "ny", "ty"
  };

  /** Writes both files of {@code d}; deterministic in {@code seed}. */
  static void generate(Dataset d, double differ, long seed, Path a, Path b) throws IOException {
    SplittableRandom r = new SplittableRandom(seed);
    long offset = Math.floorMod(seed * 0x9E37_79B9L, 10_000_000_000L);
    try (OutputStream l = open(a, d.gzip());
        OutputStream rt = open(b, d.gzip())) {
      StringBuilder key = new StringBuilder(32);
      for (long i = 0; i < d.lines(); i++) {
        // (a * i + b) mod 10^10 with a coprime to 10^10: a permutation, so keys never repeat.
        long id = Math.floorMod(i * 2_654_435_761L + offset, 10_000_000_000L);
        key.setLength(0);
        String value;
        if (d.gzip()) {
          name(id, key);
          value = version(r);
        } else {
          key.append(String.format(Locale.ROOT, "user:%010d", id));
          value = String.format(Locale.ROOT, "%016x", r.nextLong());
        }
        byte[] line = (key + "\t" + value + "\n").getBytes(StandardCharsets.US_ASCII);
        double x = r.nextDouble();
        if (x < differ / 3) {
          l.write(line);
        } else if (x < 2 * differ / 3) {
          rt.write(line);
        } else if (x < differ) {
          l.write(line);
          String changed = d.gzip() ? version(r) + ".post1" : value + "x";
          rt.write((key + "\t" + changed + "\n").getBytes(StandardCharsets.US_ASCII));
        } else {
          l.write(line);
          rt.write(line);
        }
      }
    }
  }

  private static OutputStream open(Path p, boolean gzip) throws IOException {
    OutputStream o = new BufferedOutputStream(Files.newOutputStream(p), 1 << 20);
    return gzip ? new GZIPOutputStream(o, 1 << 16) : o;
  }

  /**
   * A package-like name for {@code id}: its base-64 digits as two-letter syllables (a fixed width,
   * so distinct ids give distinct names), a hyphen after some of them.
   */
  private static void name(long id, StringBuilder sb) {
    long x = id;
    int n = 0;
    do {
      int digit = (int) (x & 63);
      if (n > 0 && n % 3 == 0 && (id & (1L << n)) != 0) {
        sb.append('-');
      }
      sb.append(SYLLABLES[digit]);
      x >>>= 6;
      n++;
    } while (x != 0);
  }

  private static String version(SplittableRandom r) {
    return r.nextInt(12) + "." + r.nextInt(40) + "." + r.nextInt(20);
  }
}
