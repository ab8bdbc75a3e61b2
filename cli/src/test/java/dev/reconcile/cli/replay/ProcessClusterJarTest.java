package dev.reconcile.cli.replay;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.cli.ReconcileCommand;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which jar runs the agents of process replays and of the catch-up bench: the running jar is taken
 * by its manifest, not by its file name, so that a copy of another build under any name runs its
 * own agents.
 */
class ProcessClusterJarTest {
  @TempDir Path dir;

  private Path jar(String name, String mainClass) throws IOException {
    Manifest m = new Manifest();
    m.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
    if (mainClass != null) {
      m.getMainAttributes().put(Attributes.Name.MAIN_CLASS, mainClass);
    }
    Path p = dir.resolve(name);
    try (OutputStream out = Files.newOutputStream(p);
        JarOutputStream j = new JarOutputStream(out, m)) {
      j.flush();
    }
    return p;
  }

  @Test
  void aJarThatStartsTheCommandLineIsRunnableUnderAnyName() throws IOException {
    assertThat(ProcessCluster.isRunnableJar(jar("reconcile.jar", ReconcileCommand.class.getName())))
        .isTrue();
    assertThat(
            ProcessCluster.isRunnableJar(
                jar("reconcile-before-the-change.jar", ReconcileCommand.class.getName())))
        .isTrue();
  }

  @Test
  void aJarWithoutTheCommandLineAsMainClassIsNot() throws IOException {
    // The module's plain jar, as other modules' tests run from it: no Main-Class.
    assertThat(ProcessCluster.isRunnableJar(jar("cli-0.1.0-SNAPSHOT.jar", null))).isFalse();
    assertThat(ProcessCluster.isRunnableJar(jar("reconcile.jar", "org.example.Main"))).isFalse();
  }

  @Test
  void aFolderAMissingFileOrAFileThatIsNoJarIsNot() throws IOException {
    assertThat(ProcessCluster.isRunnableJar(dir)).isFalse();
    assertThat(ProcessCluster.isRunnableJar(dir.resolve("absent.jar"))).isFalse();
    Path text = Files.writeString(dir.resolve("reconcile.jar"), "not a zip");
    assertThat(ProcessCluster.isRunnableJar(text)).isFalse();
  }

  @Test
  void theSystemPropertyComesFirst() {
    String before = System.getProperty("reconcile.jar");
    try {
      System.setProperty("reconcile.jar", dir.resolve("chosen.jar").toString());
      assertThat(ProcessCluster.locateJar()).isEqualTo(dir.resolve("chosen.jar"));
    } finally {
      if (before == null) {
        System.clearProperty("reconcile.jar");
      } else {
        System.setProperty("reconcile.jar", before);
      }
    }
  }
}
