package dev.reconcile.cli.replay;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The jars this module's {@code package} made (Failsafe, after {@code package}): the shaded jar is
 * runnable under its name and under another, the plain jar is not.
 */
class ProcessClusterJarIT {
  private static final Path TARGET = Path.of("target").toAbsolutePath();

  @Test
  void theShadedJarIsRunnableUnderAnyNameAndThePlainJarIsNot(@TempDir Path dir) throws IOException {
    Path shaded = TARGET.resolve("reconcile.jar");
    assertThat(shaded).as("the shaded jar (made by package)").isRegularFile();
    assertThat(ProcessCluster.isRunnableJar(shaded)).isTrue();
    Path copy = Files.copy(shaded, dir.resolve("reconcile-of-another-build.jar"));
    assertThat(ProcessCluster.isRunnableJar(copy)).isTrue();
    try (Stream<Path> files = Files.list(TARGET)) {
      Path plain =
          files
              .filter(f -> f.getFileName().toString().matches("cli-.*\\.jar"))
              .filter(f -> !f.getFileName().toString().contains("sources"))
              .findFirst()
              .orElseThrow(() -> new AssertionError("no plain jar cli-*.jar in " + TARGET));
      assertThat(ProcessCluster.isRunnableJar(plain)).as(plain.toString()).isFalse();
    }
  }
}
