package dev.reconcile.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/reconcile} rebuilds the jar when it is missing or older than a main source, resource
 * or pom. Run on a copy of the launcher in a scratch tree with {@code RECONCILE_LAUNCHER=check},
 * which only reports the decision (no build, no JVM).
 */
class LauncherTest {
  private static final Path LAUNCHER =
      Path.of("..", "bin", "reconcile").toAbsolutePath().normalize();
  private static final Instant BUILT = Instant.parse("2026-01-01T00:00:00Z");

  @TempDir Path root;
  private Path jar;
  private Path source;

  @BeforeEach
  void scratchTree() throws Exception {
    Files.createDirectories(root.resolve("bin"));
    Path launcher = root.resolve("bin/reconcile");
    Files.copy(LAUNCHER, launcher);
    assertThat(launcher.toFile().setExecutable(true)).isTrue();
    jar = root.resolve("cli/target/reconcile.jar");
    source = root.resolve("replica-agent/src/main/java/dev/reconcile/agent/A.java");
    for (Path p :
        new Path[] {
          root.resolve("pom.xml"),
          root.resolve("cli/pom.xml"),
          root.resolve("replica-agent/pom.xml"),
          source,
          root.resolve("cli/src/main/resources/logback.xml"),
          root.resolve("cli/src/test/java/dev/reconcile/cli/T.java"),
          root.resolve("docs/README.md"),
          jar
        }) {
      Files.createDirectories(p.getParent());
      Files.writeString(p, "x");
      Files.setLastModifiedTime(p, FileTime.from(BUILT.minusSeconds(3600)));
    }
    Files.setLastModifiedTime(jar, FileTime.from(BUILT));
  }

  private String check() throws Exception {
    ProcessBuilder b =
        new ProcessBuilder(root.resolve("bin/reconcile").toString(), "--version")
            .directory(root.toFile())
            .redirectErrorStream(true);
    b.environment().put("RECONCILE_LAUNCHER", "check");
    Process p = b.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    return out;
  }

  private void touch(Path p) throws Exception {
    Files.setLastModifiedTime(p, FileTime.from(BUILT.plusSeconds(60)));
  }

  @Test
  void aJarNewerThanEverySourceIsUsedAsIs() throws Exception {
    assertThat(check()).isEqualTo("fresh");
  }

  @Test
  void aTouchedSourceTriggersARebuild() throws Exception {
    touch(source);
    assertThat(check()).isEqualTo("stale: " + source.toRealPath() + " is newer than the jar");
  }

  @Test
  void aTouchedPomOrResourceTriggersARebuild() throws Exception {
    touch(root.resolve("pom.xml"));
    assertThat(check()).startsWith("stale: ").endsWith("pom.xml is newer than the jar");
    Files.setLastModifiedTime(root.resolve("pom.xml"), FileTime.from(BUILT.minusSeconds(1)));
    touch(root.resolve("cli/src/main/resources/logback.xml"));
    assertThat(check()).endsWith("logback.xml is newer than the jar");
  }

  @Test
  void testsAndDocsDoNotTriggerARebuild() throws Exception {
    touch(root.resolve("cli/src/test/java/dev/reconcile/cli/T.java"));
    touch(root.resolve("docs/README.md"));
    assertThat(check()).isEqualTo("fresh");
  }

  @Test
  void aMissingJarIsBuilt() throws Exception {
    Files.delete(jar);
    assertThat(check()).startsWith("stale: ").endsWith("reconcile.jar is missing");
  }
}
