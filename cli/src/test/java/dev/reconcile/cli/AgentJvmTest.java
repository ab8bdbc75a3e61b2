package dev.reconcile.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AgentJvmTest {
  @TempDir Path dir;

  @Test
  void hugePagesOnlyWhenTheKernelOffersThemOnRequest() throws Exception {
    Path f = dir.resolve("enabled");
    Files.writeString(f, "always [madvise] never\n");
    assertThat(AgentJvm.offersMadvise(f)).isTrue();
    Files.writeString(f, "[always] madvise never\n");
    assertThat(AgentJvm.offersMadvise(f)).isFalse();
    Files.writeString(f, "always madvise [never]\n");
    assertThat(AgentJvm.offersMadvise(f)).isFalse();
    assertThat(AgentJvm.offersMadvise(dir.resolve("missing"))).isFalse();
  }

  @Test
  void theLauncherGivesAnAgentTheSameOptionUnderTheSameCondition() throws Exception {
    String script = launcher();
    int start = script.indexOf("  agent)");
    String agentCase = script.substring(start, script.indexOf("\n    ;;\n", start));
    assertThat(agentCase)
        .contains("opts+=(" + AgentJvm.HUGE_PAGES + ")")
        .contains("if huge_pages_on_request; then")
        .contains("opts+=(" + AgentJvm.YOUNG_GENERATION + ")")
        .contains("opts+=(" + AgentJvm.INITIAL_HEAP + " " + AgentJvm.PRE_TOUCH + ")")
        .contains("opts+=(" + AgentJvm.METASPACE + " " + AgentJvm.HEAP_GROWTH + ")")
        .contains("*\" -Xmx\"*")
        .contains("$((2 * 1024 * 1024))")
        .contains("with_archive agent train_agent");
    assertThat(script)
        .contains("read -r thp < " + AgentJvm.THP + " ")
        .contains("[[ \"$thp\" == *\"[madvise]\"* ]]");
    assertThat(AgentJvm.PRE_TOUCH_MIN_MEMORY).isEqualTo(2L << 30);
    // the launcher's training run is the one AgentJvm.makeClassArchive runs for the bench
    assertThat(script)
        .contains("AGENT_TRAINING_KEYS=" + AgentJvm.TRAINING_KEYS + "\n")
        .contains("train_args=(demo --keys \"$AGENT_TRAINING_KEYS\" --dir \"$1/demo\")")
        .contains("quiet=(" + String.join(" ", AgentJvm.QUIET_CDS) + ")");
  }

  @Test
  void theHeapIsPreTouchedOnlyWhenNothingElseSizesItAndTheMachineHasRoom() {
    long big = 8L << 30;
    assertThat(AgentJvm.options(true, big, List.of()))
        .containsExactly(
            AgentJvm.HUGE_PAGES,
            AgentJvm.YOUNG_GENERATION,
            AgentJvm.INITIAL_HEAP,
            AgentJvm.PRE_TOUCH,
            AgentJvm.METASPACE,
            AgentJvm.HEAP_GROWTH);
    assertThat(AgentJvm.options(false, big, List.of("-Dx=y")))
        .containsExactly(
            AgentJvm.YOUNG_GENERATION,
            AgentJvm.INITIAL_HEAP,
            AgentJvm.PRE_TOUCH,
            AgentJvm.METASPACE,
            AgentJvm.HEAP_GROWTH);
    for (String sizing :
        List.of(
            "-Xmx128m",
            "-Xms1g",
            "-XX:MaxHeapSize=1g",
            "-XX:InitialHeapSize=64m",
            "-XX:MaxRAMPercentage=50",
            "-XX:MaxRAM=1g")) {
      assertThat(AgentJvm.options(false, big, List.of(sizing)))
          .as(sizing)
          .doesNotContain(AgentJvm.INITIAL_HEAP, AgentJvm.PRE_TOUCH)
          .contains(AgentJvm.YOUNG_GENERATION, AgentJvm.METASPACE, AgentJvm.HEAP_GROWTH);
    }
    assertThat(AgentJvm.options(false, AgentJvm.PRE_TOUCH_MIN_MEMORY - 1, List.of()))
        .doesNotContain(AgentJvm.INITIAL_HEAP, AgentJvm.PRE_TOUCH);
  }

  @Test
  void thisJvmStartsWithTheOptionsAndWithASmallerHeapOfTheCallers() throws Exception {
    assertThat(javaVersion(AgentJvm.defaultOptions())).isZero();
    List<String> small = List.of("-Xmx128m");
    List<String> withSmall = new ArrayList<>(AgentJvm.defaultOptions(small));
    withSmall.addAll(small);
    assertThat(javaVersion(withSmall)).isZero();
    // What the rule avoids: an initial heap above the caller's maximum stops the JVM.
    assertThat(javaVersion(List.of(AgentJvm.INITIAL_HEAP, "-Xmx128m"))).isNotZero();
  }

  private int javaVersion(List<String> options) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(AgentJvm.JAVA.toString());
    cmd.addAll(options);
    cmd.add("-version");
    Process p =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("java-version.log").toFile())
            .start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("java -version exits").isTrue();
    return p.exitValue();
  }

  @Test
  void theYoungGenerationIsFixedWhateverTheKernelOffers() {
    assertThat(AgentJvm.defaultOptions()).contains(AgentJvm.YOUNG_GENERATION);
  }

  /** The launcher extracts the same file, on the same platforms, that process replays copy. */
  @Test
  void theLauncherExtractsTheLibraryAgentJvmNames() throws Exception {
    String script = launcher();
    assertThat(script)
        .contains(
            "linux*-x86_64) lib="
                + AgentJvm.rocksDbLibraryName("Linux", "x86_64").orElseThrow()
                + " ;;")
        .contains(
            "linux*-aarch64) lib="
                + AgentJvm.rocksDbLibraryName("Linux", "aarch64").orElseThrow()
                + " ;;")
        .contains("opts+=(-Djava.library.path=\"$dir")
        .contains("\nwith_native_library\n");
  }

  @Test
  void rocksDbsLibraryNameIsKnownForLinuxOnX86AndArm() {
    assertThat(AgentJvm.rocksDbLibraryName("Linux", "amd64")).contains("librocksdbjni-linux64.so");
    assertThat(AgentJvm.rocksDbLibraryName("Linux", "aarch64"))
        .contains("librocksdbjni-linux-aarch64.so");
    assertThat(AgentJvm.rocksDbLibraryName("Linux", "ppc64le")).isEmpty();
    assertThat(AgentJvm.rocksDbLibraryName("Mac OS X", "aarch64")).isEmpty();
  }

  /** The library is copied byte for byte out of the jar; a jar without it gives no option. */
  @Test
  void rocksDbsLibraryIsCopiedOutOfTheJar() throws Exception {
    String name =
        AgentJvm.rocksDbLibraryName(System.getProperty("os.name"), System.getProperty("os.arch"))
            .orElseThrow();
    byte[] body = new byte[100_000];
    new java.util.Random(7).nextBytes(body);
    Path jar = dir.resolve("a.jar");
    try (ZipOutputStream z = new ZipOutputStream(Files.newOutputStream(jar))) {
      z.putNextEntry(new ZipEntry("META-INF/MANIFEST.MF"));
      z.closeEntry();
      z.putNextEntry(new ZipEntry(name));
      z.write(body);
      z.closeEntry();
    }
    Path lib = dir.resolve("lib");
    assertThat(AgentJvm.rocksDbLibraryOption(jar, lib))
        .contains("-Djava.library.path=" + lib.toAbsolutePath());
    assertThat(Files.readAllBytes(lib.resolve(name))).isEqualTo(body);

    Path empty = dir.resolve("b.jar");
    try (ZipOutputStream z = new ZipOutputStream(Files.newOutputStream(empty))) {
      z.putNextEntry(new ZipEntry("META-INF/MANIFEST.MF"));
      z.closeEntry();
    }
    assertThat(AgentJvm.rocksDbLibraryOption(empty, dir.resolve("none"))).isEmpty();
  }

  /** The text of {@code bin/reconcile}, found above the working directory. */
  private static String launcher() throws Exception {
    Path root = Path.of("").toAbsolutePath();
    while (!Files.exists(root.resolve("bin/reconcile"))) {
      root = root.getParent();
    }
    return Files.readString(root.resolve("bin/reconcile"));
  }

  /** The bench's warning names exactly the agent options a JVM neither gives nor overrides. */
  @Test
  void missingNamesTheAgentOptionsAJvmDoesNotSet() {
    List<String> wanted = AgentJvm.options(true, 8L << 30, List.of());
    assertThat(AgentJvm.missing(wanted, List.of("-Xmx10g")))
        .as("a JVM started with -Xmx10g only")
        .containsExactlyElementsOf(wanted);
    assertThat(AgentJvm.missing(wanted, wanted)).isEmpty();
    assertThat(
            AgentJvm.missing(
                wanted,
                List.of(
                    "-XX:-UseTransparentHugePages",
                    "-Xmn64m",
                    "-Xms1g",
                    "-XX:-AlwaysPreTouch",
                    "-XX:MetaspaceSize=64m")))
        .as("options set to other values are the caller's choice")
        .containsExactly(AgentJvm.HEAP_GROWTH);
    assertThat(AgentJvm.optionName("-XX:GCTimeRatio=1")).isEqualTo("GCTimeRatio");
    assertThat(AgentJvm.optionName("-XX:+AlwaysPreTouch")).isEqualTo("AlwaysPreTouch");
    assertThat(AgentJvm.optionName("-Xmn128m")).isEqualTo("-Xmn");
  }
}
