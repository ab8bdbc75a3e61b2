package dev.reconcile.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** Removal of the folders the commands create (demo data, replay and bench work folders). */
public final class FileTrees {
  private FileTrees() {}

  /** Deletes {@code dir} and everything under it; nothing happens when it does not exist. */
  public static void delete(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> s = Files.walk(dir)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }
}
