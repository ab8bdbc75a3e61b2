package dev.reconcile.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the shaded jar (and bin/reconcile) as real processes. An integration test (Failsafe, after
 * {@code package} made {@code cli/target/reconcile.jar}): a missing jar fails it, it is never
 * skipped.
 */
class ShadedJarIT {
  private static final Path JAR = Path.of("target", "reconcile.jar").toAbsolutePath();
  private static final Path LAUNCHER =
      Path.of("..", "bin", "reconcile").toAbsolutePath().normalize();
  @TempDir Path dir;

  @BeforeEach
  void needsJar() {
    assertThat(JAR).as("the shaded jar (made by package, before integration-test)").isRegularFile();
    assertThat(Files.isExecutable(LAUNCHER)).as(LAUNCHER + " is executable").isTrue();
  }

  private record Proc(int status, String out, String err) {}

  private Proc exec(List<String> cmd) throws Exception {
    return exec(cmd, Map.of());
  }

  private Proc exec(List<String> cmd, Map<String, String> env) throws Exception {
    Path out = dir.resolve("stdout");
    Path err = dir.resolve("stderr");
    ProcessBuilder pb =
        new ProcessBuilder(cmd)
            .directory(dir.toFile())
            .redirectOutput(out.toFile())
            .redirectError(err.toFile());
    pb.environment().putAll(env);
    Process p = pb.start();
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("%s finished", cmd).isTrue();
    return new Proc(
        p.exitValue(),
        Files.readString(out, StandardCharsets.UTF_8),
        Files.readString(err, StandardCharsets.UTF_8));
  }

  private Proc java(String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(AgentJvm.JAVA.toString(), "-jar", JAR.toString()));
    cmd.addAll(List.of(args));
    return exec(cmd);
  }

  @Test
  void jarDiffsTwoFilesWithTheProductionEstimator() throws Exception {
    Files.write(
        dir.resolve("a.txt"), "k1\tv1\nk2\tv2\ncafé\t1\n\\x\tq\n".getBytes(StandardCharsets.UTF_8));
    Files.write(
        dir.resolve("b.txt"),
        "k1\tv1\nk2\tCHANGED\ncafé\t1\nk3\n".getBytes(StandardCharsets.UTF_8));
    Proc p = java("diff", "file:a.txt", "file:b.txt");
    assertThat(p.out()).as(p.err()).isEqualTo("< \\\\x\n! k2\n> k3\n");
    assertThat(p.status()).isEqualTo(1);
    assertThat(p.err())
        .contains("reconcile: keys: 1 only left (<), 1 only right (>), 1 changed (!)");

    Proc same = java("diff", "-q", "file:a.txt", "file:a.txt");
    assertThat(same.status()).isZero();
    assertThat(same.out() + same.err()).isEmpty();

    Proc est = java("estimate", "file:a.txt", "file:b.txt");
    assertThat(est.status()).as(est.err()).isEqualTo(1);
    assertThat(est.out()).startsWith("estimated difference: ");
  }

  @Test
  void jarReportsTroubleWithStatusTwo() throws Exception {
    Proc p = java("diff", "file:missing.txt", "file:other.txt");
    assertThat(p.status()).isEqualTo(2);
    assertThat(p.out()).isEmpty();
    assertThat(p.err()).isEqualTo("reconcile: file:missing.txt: No such file or directory\n");
  }

  /**
   * A one-shot command gets the heap in transparent huge pages exactly where the kernel offers them
   * on request ({@code [madvise]}), and the rest of its options (docs/benchmarks.md, section 4):
   * the JVM's own final flags, printed by {@code -XX:+PrintFlagsFinal} given in JAVA_OPTS.
   */
  @Test
  void launcherGivesOneShotCommandsHugePagesWhereTheKernelOffersThem() throws Exception {
    Path thp = Path.of("/sys/kernel/mm/transparent_hugepage/enabled");
    boolean offered = Files.isReadable(thp) && Files.readString(thp).contains("[madvise]");
    Files.write(dir.resolve("a.txt"), "x\n".getBytes(StandardCharsets.US_ASCII));
    Proc p =
        exec(
            List.of(LAUNCHER.toString(), "diff", "-q", "file:a.txt", "file:a.txt"),
            Map.of("JAVA_OPTS", "-XX:+PrintFlagsFinal"));
    assertThat(p.status()).as(p.err()).isZero();
    assertThat(p.out())
        .containsPattern("bool UseTransparentHugePages\\s+= " + offered + "\\s")
        .containsPattern("bool UseSerialGC\\s+= true\\s")
        .containsPattern("intx TieredStopAtLevel\\s+= 1\\s");
  }

  /**
   * C1 alone for one-shot inputs under 256 MB (a gzip file counted four times its size), C2 as well
   * beyond: the launcher sums the sizes of every {@code file:} argument, whatever its name holds.
   * Sparse files, and a usage error after the JVM printed its flags, so nothing is read.
   */
  @Test
  void launcherLeavesC2ToLargeOneShotInputs() throws Exception {
    Path small = dir.resolve("small file.txt");
    Path packed = dir.resolve("packed.gz");
    for (Path f : List.of(small, packed)) {
      try (java.io.RandomAccessFile r = new java.io.RandomAccessFile(f.toFile(), "rw")) {
        r.setLength(f == small ? 10L << 20 : 60L << 20);
      }
    }
    record Case(List<String> files, int level) {}
    for (Case c :
        List.of(
            new Case(List.of("file:" + small, "file:" + small), 1),
            new Case(List.of("file:" + packed, "file:" + small), 1), // 240 + 10 MiB
            new Case(List.of("file:" + packed, "file:" + packed), 4))) { // 480 MiB
      List<String> cmd = new ArrayList<>(List.of(LAUNCHER.toString(), "diff", "--format=none"));
      cmd.addAll(c.files());
      Proc p = exec(cmd, Map.of("JAVA_OPTS", "-XX:+PrintFlagsFinal"));
      assertThat(p.status()).as(p.err()).isEqualTo(2);
      assertThat(p.err()).contains("Invalid value for option '--format'");
      assertThat(p.out())
          .as("%s", c.files())
          .containsPattern("intx TieredStopAtLevel\\s+= " + c.level() + "\\s");
    }
  }

  /**
   * When the launcher remakes a class archive (the jar is newer), archives of the same kind older
   * than the jar go: they are never used again (another Java installation's, or one named by an
   * earlier form of the Java id). One newer than the jar, another installation's in use, stays.
   */
  @Test
  void launcherRemovesArchivesOlderThanTheJarWhenItMakesOne() throws Exception {
    Path target = JAR.getParent();
    Path stale = target.resolve("reconcile-oneshot-static-1.jsa");
    Path live = target.resolve("reconcile-oneshot-static-2.jsa");
    Files.write(stale, new byte[] {1});
    Files.write(live, new byte[] {2});
    try {
      FileTime now = FileTime.fromMillis(System.currentTimeMillis());
      Files.setLastModifiedTime(stale, FileTime.fromMillis(now.toMillis() - 86_400_000L));
      Files.setLastModifiedTime(JAR, now); // every archive is older now: the launcher remakes its
      Files.setLastModifiedTime(live, FileTime.fromMillis(now.toMillis() + 60_000L));
      Files.write(dir.resolve("a.txt"), "x\n".getBytes(StandardCharsets.US_ASCII));
      Proc p = exec(List.of(LAUNCHER.toString(), "diff", "-q", "file:a.txt", "file:a.txt"));
      assertThat(p.status()).as(p.err()).isZero();
      assertThat(stale).doesNotExist();
      assertThat(live).exists();
      Path made = newestArchive("reconcile-oneshot-static-\\d{3,}\\.jsa");
      assertThat(Files.getLastModifiedTime(made)).isGreaterThan(Files.getLastModifiedTime(JAR));
    } finally {
      Files.deleteIfExists(stale);
      Files.deleteIfExists(live);
    }
  }

  @Test
  void launcherWorksFromAnotherDirectory() throws Exception {
    Files.write(dir.resolve("a.txt"), "x\n".getBytes(StandardCharsets.US_ASCII));
    Proc p = exec(List.of(LAUNCHER.toString(), "diff", "-q", "file:a.txt", "file:a.txt"));
    assertThat(p.status()).as(p.err()).isZero();
    Proc v = exec(List.of(LAUNCHER.toString(), "--version"));
    assertThat(v.out()).startsWith("reconcile ");
  }

  /**
   * {@code bin/reconcile agent} makes the agents' class archive once per jar (a training demo) and
   * starts the agent with it; a JVM given the archive loads the agent's classes from it.
   */
  /**
   * The newest class archive beside the jar whose name matches {@code regex} (archives made for
   * other Java installations may lie there too, each named after its own).
   */
  private static Path newestArchive(String regex) throws Exception {
    try (Stream<Path> files = Files.list(JAR.getParent())) {
      return files
          .filter(f -> f.getFileName().toString().matches(regex))
          .max(Comparator.comparing(f -> f.toFile().lastModified()))
          .orElseThrow(() -> new AssertionError("no class archive " + regex + " beside " + JAR));
    }
  }

  @Test
  void launcherGivesAnAgentItsClassArchive() throws Exception {
    Proc p = exec(List.of(LAUNCHER.toString(), "agent", "--help"));
    assertThat(p.status()).as(p.err()).isZero();
    assertThat(p.out()).startsWith("Usage: reconcile agent");
    Path jsa = newestArchive("reconcile-agent-\\d+\\.jsa");
    assertThat(Files.getLastModifiedTime(jsa)).isGreaterThan(Files.getLastModifiedTime(JAR));
    Proc loaded =
        exec(
            List.of(
                AgentJvm.JAVA.toString(),
                "-XX:SharedArchiveFile=" + jsa,
                "-Xlog:class+load=info",
                "-cp",
                JAR.toRealPath().toString(), // the path the launcher's training run had
                "dev.reconcile.cli.ReconcileCommand",
                "--version"));
    assertThat(loaded.status()).as(loaded.err()).isZero();
    assertThat(loaded.out())
        .containsPattern("dev\\.reconcile\\.cli\\.ReconcileCommand source: shared objects file");
  }

  /**
   * {@code bin/reconcile diff} makes the one-shot commands' static class archive once per jar and
   * runs with it: picocli's classes (class-file version 49, which Java 17's dynamic archive leaves
   * out) and the command's own come from the archive, not from the jar.
   */
  @Test
  void launcherGivesOneShotCommandsAStaticArchiveWithPicocliInIt() throws Exception {
    Files.write(dir.resolve("a.txt"), "x\n".getBytes(StandardCharsets.US_ASCII));
    List<String> diff = List.of(LAUNCHER.toString(), "diff", "-q", "file:a.txt", "file:a.txt");
    assertThat(exec(diff).status()).isZero(); // makes the archive if the jar is newer
    Path jsa = newestArchive("reconcile-oneshot-static-\\d+\\.jsa");
    assertThat(Files.getLastModifiedTime(jsa)).isGreaterThan(Files.getLastModifiedTime(JAR));
    Proc p = exec(diff, Map.of("JAVA_OPTS", "-Xlog:class+load=info"));
    assertThat(p.status()).as(p.err()).isZero();
    assertThat(p.out())
        .containsPattern("picocli\\.CommandLine source: shared objects file")
        .containsPattern("dev\\.reconcile\\.cli\\.DiffCommand source: shared objects file")
        .doesNotContainPattern("picocli\\.CommandLine source: (jar|file)");
  }

  /**
   * A repair round in the jar's own process (the demo: two agents, one round) moves Netty buffers
   * without loading Netty's JFR event classes (ReconcileCommand.setProcessDefaults), and with
   * {@code -Dio.netty.jfr.enabled=true} it loads them: the check can fail.
   */
  @Test
  void nettysJfrEventClassesStayUnloadedUnlessAskedFor() throws Exception {
    Pattern events = Pattern.compile("io\\.netty\\.buffer\\.\\w*Event source:");
    for (boolean asked : new boolean[] {false, true}) {
      List<String> cmd =
          new ArrayList<>(List.of(AgentJvm.JAVA.toString(), "-Xlog:class+load=info"));
      if (asked) {
        cmd.add("-Dio.netty.jfr.enabled=true");
      }
      cmd.addAll(
          List.of(
              "-jar",
              JAR.toString(),
              "demo",
              "--keys",
              "500",
              "--dir",
              dir.resolve("demo-" + asked).toString()));
      Proc p = exec(cmd);
      assertThat(p.status()).as(p.err()).isZero();
      assertThat(p.out()).contains("replicas MATCH");
      assertThat(events.matcher(p.out()).find())
          .as("Netty JFR event classes loaded")
          .isEqualTo(asked);
    }
  }

  /**
   * {@code bin/reconcile} extracts RocksDB's JNI library once per jar beside it, and a process that
   * opens a store (the demo's two agents) loads it from there, not from a copy in {@code
   * java.io.tmpdir} (which a killed process leaves behind).
   */
  @Test
  void launcherLoadsRocksDbsLibraryFromBesideTheJar() throws Exception {
    Path tmp = Files.createDirectories(dir.resolve("tmp"));
    Path log = dir.resolve("library.log");
    Proc p =
        exec(
            List.of(
                LAUNCHER.toString(),
                "demo",
                "--keys",
                "200",
                "--dir",
                dir.resolve("demo").toString()),
            Map.of("JAVA_OPTS", "-Xlog:library=info:file=" + log + " -Djava.io.tmpdir=" + tmp));
    assertThat(p.status()).as(p.err()).isZero();
    assertThat(p.out()).contains("replicas MATCH");
    Path lib = JAR.toRealPath().getParent().resolve("native").resolve("librocksdbjni-linux64.so");
    assertThat(lib).isRegularFile();
    assertThat(Files.getLastModifiedTime(lib)).isGreaterThan(Files.getLastModifiedTime(JAR));
    assertThat(Files.readString(log, StandardCharsets.UTF_8))
        .contains("Loaded library " + lib + ",")
        .doesNotContain("Loaded library " + tmp);
  }

  /**
   * Run as {@code java -jar}, without the launcher, a process that opens a store (the demo's two
   * agents) loads RocksDB's JNI library from the user's cache ({@code RocksDbLibrary}), copied
   * there once per jar, and never from a copy in {@code java.io.tmpdir}, which a killed process
   * would leave behind. A second run loads the same copy without writing it again.
   */
  @Test
  void jarRunWithoutTheLauncherLoadsRocksDbsLibraryFromTheUsersCache() throws Exception {
    Path tmp = Files.createDirectories(dir.resolve("tmp"));
    Path cache = dir.resolve("cache");
    Path log = dir.resolve("library.log");
    List<String> cmd =
        List.of(
            AgentJvm.JAVA.toString(),
            "-Xlog:library=info:file=" + log,
            "-Djava.io.tmpdir=" + tmp,
            "-jar",
            JAR.toString(),
            "demo",
            "--keys",
            "200",
            "--dir",
            dir.resolve("demo").toString());
    Proc p = exec(cmd, Map.of("XDG_CACHE_HOME", cache.toString()));
    assertThat(p.status()).as(p.err()).isZero();
    assertThat(p.out()).contains("replicas MATCH");
    Path lib;
    try (Stream<Path> found = Files.walk(cache.resolve("reconcile").resolve("native"))) {
      lib =
          found
              .filter(f -> f.getFileName().toString().equals("librocksdbjni-linux64.so"))
              .findFirst()
              .orElseThrow();
    }
    String loaded = Files.readString(log, StandardCharsets.UTF_8);
    assertThat(loaded)
        .contains("Loaded library " + lib.getParent())
        .doesNotContain("Loaded library " + tmp);
    try (Stream<Path> left = Files.list(tmp)) {
      assertThat(left.map(f -> f.getFileName().toString()))
          .noneMatch(n -> n.startsWith("librocksdbjni"));
    }
    FileTime copied = Files.getLastModifiedTime(lib);
    Files.delete(log);
    Proc again = exec(cmd, Map.of("XDG_CACHE_HOME", cache.toString()));
    assertThat(again.status()).as(again.err()).isZero();
    assertThat(Files.readString(log, StandardCharsets.UTF_8))
        .contains("Loaded library " + lib.getParent());
    assertThat(Files.getLastModifiedTime(lib)).isEqualTo(copied);
  }

  @Test
  void jarAnswersHelpForTheAgent() throws Exception {
    Proc p = java("agent", "--help");
    assertThat(p.status()).as(p.err()).isZero();
    assertThat(p.out()).startsWith("Usage: reconcile agent").contains("--tombstone-grace=DURATION");
  }
}
