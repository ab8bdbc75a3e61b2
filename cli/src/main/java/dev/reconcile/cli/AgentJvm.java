package dev.reconcile.cli;

import dev.reconcile.agent.store.RocksDbLibrary;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The JVM options {@code bin/reconcile} gives an agent process, for the tools that start agent
 * processes themselves (the catch-up bench): keep the two in step ({@code AgentJvmTest} reads the
 * launcher).
 *
 * <p>{@code -XX:+UseTransparentHugePages} when the kernel offers transparent huge pages on request
 * ({@code [madvise]}; with {@code [always]} the heap gets them anyway, with {@code [never]} the JVM
 * would only warn). A catch-up allocates hundreds of megabytes of record buffers in a heap the
 * process has never touched: with 4 KiB pages the kernel's page faults were a large part of the
 * agents' CPU (docs/benchmarks.md, section 3a); 2 MiB pages fault 512 times less often.
 *
 * <p>{@code -Xmn128m}: a young generation of fixed size. G1 otherwise grows it into memory the
 * process has never touched while a catch-up allocates its record buffers, and the first touch of
 * every page is a page fault in the kernel: at 64 KiB records the kernel time of the agents' event
 * loops and round workers was as large as their Java time. With the young generation fixed, each
 * collection hands the same pages back (docs/benchmarks.md, section 3a).
 *
 * <p>{@code -Xms256m -XX:+AlwaysPreTouch}: the first 256 MB of heap touched at start-up, before the
 * agent listens, instead of during its first rounds. A just-started agent holds its sketches (about
 * 50 MB of {@code long[]} at the default settings) in the young generation; the first collection,
 * which fell in the first round, copied them into old regions never touched before and took up to
 * 180 ms. Start-up takes about 0.2 s longer and the process is resident at about 155 MB more from
 * the start (docs/operations.md). Left out when the caller's options set a heap size (an initial
 * size above the maximum would stop the JVM) or the machine has under {@link #PRE_TOUCH_MIN_MEMORY}
 * (the default maximum heap, a quarter of it, would be below 256 MB).
 *
 * <p>{@code -XX:MetaspaceSize=128m}: a just-started agent holds about 17 MB of class metadata, and
 * its first round loads more, past the default first threshold (about 21 MB): that started a
 * collection and a concurrent marking cycle in the round.
 *
 * <p>{@code -XX:GCTimeRatio=1}: G1 grows the heap when collections take more than a share of the
 * time set by this ratio, and while the heap is small next to its maximum it lowers that share to 1
 * %. A catch-up of 64 KiB records collects its fixed young generation several times a second, so G1
 * grew the heap in steps of up to 1.1 GB (a fifth of what it could still take), and with {@code
 * AlwaysPreTouch} touched each step inside the collection's pause: pauses of 0.7 and 3.1 s in a
 * catch-up of 655 MB. What grows is the old generation, which holds the sketches and little else,
 * so growing it does not make collections rarer. With ratio 1 (collections may take up to half the
 * time before the heap grows for speed) the heap stays at its initial size unless the live data
 * need more; it still grows when they do.
 *
 * <p>A class-data sharing archive of the classes of an agent's first round ({@link
 * #makeClassArchive}): made once per jar and Java installation by a training demo, mapped at
 * start-up. In a cold catch-up the session and the first batches loaded and verified hundreds of
 * classes from the jar, on both agents (docs/benchmarks.md, section 3a).
 */
public final class AgentJvm {
  static final Path THP = Path.of("/sys/kernel/mm/transparent_hugepage/enabled");
  public static final String HUGE_PAGES = "-XX:+UseTransparentHugePages";
  public static final String YOUNG_GENERATION = "-Xmn128m";
  public static final String INITIAL_HEAP = "-Xms256m";
  public static final String PRE_TOUCH = "-XX:+AlwaysPreTouch";
  public static final String METASPACE = "-XX:MetaspaceSize=128m";
  public static final String HEAP_GROWTH = "-XX:GCTimeRatio=1";
  static final long PRE_TOUCH_MIN_MEMORY = 2L << 30;

  /**
   * The {@code java} launcher of this JVM. The processes the CLI starts (bench agents, replay
   * clusters, one-shot runs timed by the diff bench) run on the Java installation it runs on.
   */
  public static final Path JAVA = Path.of(System.getProperty("java.home"), "bin", "java");

  /** Records per agent of the training demo that makes an agent's class archive. */
  public static final int TRAINING_KEYS = 20_000;

  /** Options that keep a JVM quiet when it cannot map a class archive (it runs without). */
  static final List<String> QUIET_CDS = List.of("-Xlog:cds=off", "-Xlog:cds+dynamic=off");

  private AgentJvm() {}

  /**
   * Makes the class-data sharing archive {@code bin/reconcile} gives an agent, for {@code jar}, as
   * the launcher does: a training {@code demo} (two agents, {@link #TRAINING_KEYS} records each,
   * one repair round) run by {@code java} with {@code jvmOptions} and {@code
   * -XX:ArchiveClassesAtExit}. Returns the archive ({@code jsa}), or empty when the training made
   * none (a JVM without dynamic archives): agents then start without one, as the launcher's do.
   */
  public static Optional<Path> makeClassArchive(
      Path java, Path jar, List<String> jvmOptions, Path jsa, Duration timeout)
      throws IOException, InterruptedException {
    Path training = Files.createTempDirectory(jsa.toAbsolutePath().getParent(), "cds-training");
    Path made = training.resolve("a.jsa");
    List<String> cmd = new ArrayList<>();
    cmd.add(java.toString());
    cmd.addAll(jvmOptions);
    cmd.addAll(QUIET_CDS);
    cmd.add("-XX:ArchiveClassesAtExit=" + made);
    cmd.addAll(
        List.of(
            "-jar",
            jar.toString(),
            "demo",
            "--keys",
            Integer.toString(TRAINING_KEYS),
            "--dir",
            training.resolve("demo").toString()));
    Process p =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
    try {
      if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly().waitFor();
        throw new IOException("the class archive's training run took over " + timeout);
      }
      if (!Files.isRegularFile(made) || Files.size(made) == 0) {
        return Optional.empty();
      }
      Files.move(made, jsa, StandardCopyOption.REPLACE_EXISTING);
      return Optional.of(jsa);
    } finally {
      p.destroyForcibly();
      try (Stream<Path> walk = Files.walk(training)) {
        walk.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
      }
    }
  }

  /** The options that map {@code jsa}, quiet when the JVM cannot. */
  public static List<String> classArchiveOptions(Path jsa) {
    List<String> out = new ArrayList<>();
    out.add("-XX:SharedArchiveFile=" + jsa);
    out.addAll(QUIET_CDS);
    return out;
  }

  /**
   * The file name of RocksDB's JNI library in the jar for this platform, or empty where it is not
   * known here (RocksJava then extracts it itself).
   */
  static Optional<String> rocksDbLibraryName(String osName, String osArch) {
    if (!osName.startsWith("Linux")) {
      return Optional.empty();
    }
    return switch (osArch) {
      case "amd64", "x86_64" -> Optional.of("librocksdbjni-linux64.so");
      case "aarch64" -> Optional.of("librocksdbjni-linux-aarch64.so");
      default -> Optional.empty();
    };
  }

  /**
   * Copies RocksDB's JNI library out of {@code jar} into {@code dir} and returns the option that
   * makes an agent JVM load it from there ({@code -Djava.library.path=DIR}), as {@code
   * bin/reconcile} does with {@code cli/target/native/}. Without it RocksJava copies the library
   * (15 MB) into {@code java.io.tmpdir} at every start, and an agent killed with {@code kill -9}
   * leaves that copy behind (docs/operations.md, "Memory"). Empty when the jar holds no library for
   * this platform.
   */
  public static Optional<String> rocksDbLibraryOption(Path jar, Path dir) throws IOException {
    Optional<String> name =
        rocksDbLibraryName(System.getProperty("os.name"), System.getProperty("os.arch"));
    if (name.isEmpty()) {
      return Optional.empty();
    }
    if (!RocksDbLibrary.copyOut(jar, name.get(), dir)) {
      return Optional.empty();
    }
    return Optional.of("-Djava.library.path=" + dir.toAbsolutePath());
  }

  /** The options for an agent JVM on this machine, with no other options of the caller's. */
  public static List<String> defaultOptions() {
    return defaultOptions(List.of());
  }

  /**
   * The options for an agent JVM on this machine, to go before the caller's {@code extra} options
   * (which win where they set the same thing).
   */
  public static List<String> defaultOptions(List<String> extra) {
    return options(offersMadvise(THP), machineMemory(), extra);
  }

  static List<String> options(boolean madvise, long machineBytes, List<String> extra) {
    List<String> out = new ArrayList<>();
    if (madvise) {
      out.add(HUGE_PAGES);
    }
    out.add(YOUNG_GENERATION);
    if (machineBytes >= PRE_TOUCH_MIN_MEMORY && !setsHeapSize(extra)) {
      out.add(INITIAL_HEAP);
      out.add(PRE_TOUCH);
    }
    out.add(METASPACE);
    out.add(HEAP_GROWTH);
    return out;
  }

  /**
   * The options of {@link #defaultOptions()} that {@code jvmArguments} (a running JVM's, for
   * example) neither give nor override: an agent run inside that JVM (the bench's in-process
   * agents) runs without them, slower (docs/benchmarks.md, section 3, "stop 36").
   */
  public static List<String> missingFrom(List<String> jvmArguments) {
    return missing(defaultOptions(jvmArguments), jvmArguments);
  }

  /**
   * The options of {@code wanted} that {@code given} does not set: an option is set by any value of
   * the same name ({@code -XX:-Flag} sets {@code -XX:+Flag}, {@code -Xmn64m} sets {@code
   * -Xmn128m}).
   */
  static List<String> missing(List<String> wanted, List<String> given) {
    List<String> out = new ArrayList<>();
    for (String w : wanted) {
      boolean set = false;
      for (String g : given) {
        set |= optionName(g).equals(optionName(w));
      }
      if (!set) {
        out.add(w);
      }
    }
    return out;
  }

  /** The name an option sets: {@code -XX:[+-]Name[=v]} gives Name, {@code -XmnSIZE} gives -Xmn. */
  static String optionName(String option) {
    if (option.startsWith("-XX:")) {
      String rest = option.substring(4);
      if (rest.startsWith("+") || rest.startsWith("-")) {
        rest = rest.substring(1);
      }
      int eq = rest.indexOf('=');
      return eq < 0 ? rest : rest.substring(0, eq);
    }
    if (option.startsWith("-Xmn") || option.startsWith("-Xms") || option.startsWith("-Xmx")) {
      return option.substring(0, 4);
    }
    return option;
  }

  /** Whether {@code options} choose the heap's size (then the initial heap is theirs to set). */
  static boolean setsHeapSize(List<String> options) {
    for (String o : options) {
      if (o.startsWith("-Xmx")
          || o.startsWith("-Xms")
          || o.startsWith("-XX:MaxHeapSize")
          || o.startsWith("-XX:InitialHeapSize")
          || o.contains("RAMPercentage")
          || o.startsWith("-XX:MaxRAM")) {
        return true;
      }
    }
    return false;
  }

  private static long machineMemory() {
    return ManagementFactory.getOperatingSystemMXBean()
            instanceof com.sun.management.OperatingSystemMXBean os
        ? os.getTotalMemorySize()
        : 0;
  }

  static boolean offersMadvise(Path setting) {
    try {
      return Files.readString(setting, StandardCharsets.US_ASCII).contains("[madvise]");
    } catch (IOException | RuntimeException e) {
      return false; // not Linux, or no THP support
    }
  }
}
