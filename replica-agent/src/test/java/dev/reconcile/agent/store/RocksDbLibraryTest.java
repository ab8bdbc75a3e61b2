package dev.reconcile.agent.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.jar.JarFile;
import java.util.zip.ZipEntry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.RocksDB;
import org.rocksdb.util.Environment;

/**
 * {@link RocksDbLibrary}: the JNI library copied once per jar into a per-user cache, whole, and
 * loaded from there (the process-level check, a jar run without the launcher leaving no copy in
 * {@code java.io.tmpdir}, is {@code ShadedJarIT}).
 */
class RocksDbLibraryTest {
  private static final String NAME = Environment.getJniLibraryFileName("rocksdb");
  @TempDir Path dir;

  /** rocksdbjni's own jar, which holds the library (this module's tests run on it). */
  private static Path rocksJar() throws Exception {
    return Path.of(RocksDB.class.getProtectionDomain().getCodeSource().getLocation().toURI());
  }

  private static long entrySize() throws Exception {
    try (JarFile j = new JarFile(rocksJar().toFile())) {
      ZipEntry e = j.getEntry(NAME);
      assertThat(e).as("%s in %s", NAME, rocksJar()).isNotNull();
      return e.getSize();
    }
  }

  @Test
  void theCacheIsTheUsersOwn() {
    assertThat(RocksDbLibrary.cacheRoot(Map.of("XDG_CACHE_HOME", "/x/cache", "HOME", "/home/u")))
        .contains(Path.of("/x/cache/reconcile/native"));
    assertThat(RocksDbLibrary.cacheRoot(Map.of("HOME", "/home/u")))
        .contains(Path.of("/home/u/.cache/reconcile/native"));
    // A relative XDG_CACHE_HOME is invalid (XDG base directory spec): the home's cache instead.
    assertThat(RocksDbLibrary.cacheRoot(Map.of("XDG_CACHE_HOME", "cache", "HOME", "/home/u")))
        .contains(Path.of("/home/u/.cache/reconcile/native"));
    assertThat(RocksDbLibrary.cacheRoot(Map.of())).isEmpty();
  }

  @Test
  void aLibraryOnTheLibraryPathIsLeftToRocksJava() throws Exception {
    Path a = Files.createDirectories(dir.resolve("a"));
    Path b = Files.createDirectories(dir.resolve("b"));
    String path = a + File.pathSeparator + b;
    assertThat(RocksDbLibrary.onLibraryPath(path, NAME)).isFalse();
    Files.writeString(b.resolve(NAME), "x");
    assertThat(RocksDbLibrary.onLibraryPath(path, NAME)).isTrue();
    assertThat(RocksDbLibrary.onLibraryPath("", NAME)).isFalse();
  }

  @Test
  void copiedOncePerJarWholeAndPrivate() throws Exception {
    Path root = dir.resolve("cache").resolve("reconcile").resolve("native");
    Optional<Path> first = RocksDbLibrary.extract(rocksJar(), NAME, root);
    assertThat(first).isPresent();
    Path lib = first.get().resolve(NAME);
    assertThat(lib).isRegularFile();
    assertThat(Files.size(lib)).isEqualTo(entrySize());
    assertThat(first.get().getFileName().toString()).endsWith("-" + entrySize());
    for (Path p = first.get(); !p.equals(dir.resolve("cache")); p = p.getParent()) {
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(p)))
          .as("%s", p)
          .isEqualTo("rwx------");
    }
    // RocksDB.loadLibrary(List) looks for this name (RocksJava 10.10): a link to the library.
    String looked = Environment.getJniLibraryFileName("rocksdbjni");
    if (!looked.equals(NAME)) {
      Path link = first.get().resolve(looked);
      assertThat(Files.isSymbolicLink(link)).isTrue();
      assertThat(link.toRealPath()).isEqualTo(lib.toRealPath());
    }
    try (var files = Files.list(first.get())) {
      assertThat(files.map(f -> f.getFileName().toString()))
          .as("no temporary file left")
          .allMatch(n -> !n.endsWith(".part"));
    }

    // The second process finds it whole and does not write it again.
    FileTime before = FileTime.fromMillis(1_000_000_000_000L);
    Files.setLastModifiedTime(lib, before);
    assertThat(RocksDbLibrary.extract(rocksJar(), NAME, root)).isEqualTo(first);
    assertThat(Files.getLastModifiedTime(lib)).isEqualTo(before);

    // A copy cut short (a full disk, a crash in an older version) is written again.
    Files.write(lib, new byte[100]);
    assertThat(RocksDbLibrary.extract(rocksJar(), NAME, root)).isEqualTo(first);
    assertThat(Files.size(lib)).isEqualTo(entrySize());
  }

  /** Each load marks its folder used; other jars' folders unused for 30 days go. */
  @Test
  void foldersOfOtherJarsUnusedFor30DaysAreRemoved() throws Exception {
    Path root = dir.resolve("native");
    Instant now = Instant.now();
    Path old = folder(root, "0badc0de-15000000", now.minus(Duration.ofDays(31)));
    Path recent = folder(root, "0badf00d-15000001", now.minus(Duration.ofDays(29)));
    Path notOurs = folder(root, "notes", now.minus(Duration.ofDays(400)));
    Path current = RocksDbLibrary.extract(rocksJar(), NAME, root).orElseThrow();

    assertThat(old).doesNotExist();
    assertThat(recent.resolve(NAME)).isRegularFile();
    assertThat(notOurs.resolve(NAME)).as("a folder this class did not name").isRegularFile();
    assertThat(current.resolve(NAME)).isRegularFile();
    assertThat(Files.getLastModifiedTime(current).toInstant())
        .as("marked used by the load")
        .isAfterOrEqualTo(now.minusSeconds(1));

    // The current folder itself, even when its mark is old, is kept and marked again.
    Files.setLastModifiedTime(current, FileTime.from(now.minus(Duration.ofDays(90))));
    assertThat(RocksDbLibrary.extract(rocksJar(), NAME, root)).contains(current);
    assertThat(current.resolve(NAME)).isRegularFile();
    assertThat(Files.getLastModifiedTime(current).toInstant())
        .isAfterOrEqualTo(now.minusSeconds(1));
  }

  /** A folder under {@code root} holding a library file and its link, last used at {@code used}. */
  private static Path folder(Path root, String name, Instant used) throws Exception {
    Path f = Files.createDirectories(root.resolve(name));
    Files.writeString(f.resolve(NAME), "x");
    Files.createSymbolicLink(f.resolve("link.so"), Path.of(NAME));
    Files.setLastModifiedTime(f, FileTime.from(used));
    return f;
  }

  @Test
  void noJarOrNoEntryMeansRocksJavasOwnWay() throws Exception {
    Path root = dir.resolve("cache");
    assertThat(RocksDbLibrary.extract(dir, NAME, root)).as("classes from a folder").isEmpty();
    assertThat(RocksDbLibrary.extract(rocksJar(), "libnothing.so", root)).isEmpty();
    assertThat(root).doesNotExist();
  }
}
