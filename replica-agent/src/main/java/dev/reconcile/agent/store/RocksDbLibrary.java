package dev.reconcile.agent.store;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.jar.JarFile;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import org.rocksdb.RocksDB;
import org.rocksdb.util.Environment;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loads RocksDB's JNI library from a per-user cache instead of a fresh copy in {@code
 * java.io.tmpdir}.
 *
 * <p>Left to itself, RocksJava copies its library (15 MB, inside the jar) into {@code
 * java.io.tmpdir} at every start of a process that opens a store and deletes the copy at a normal
 * exit: a process killed with SIGKILL, or by the OOM killer, leaves it behind, so an agent that
 * crashes and restarts in a loop fills {@code /tmp} 15 MB per start. {@link #load} copies it once
 * per jar into {@code $XDG_CACHE_HOME/reconcile/native/CRC-SIZE/} (else {@code
 * ~/.cache/reconcile/...}), named by the jar entry's CRC-32 and size, which the jar's central
 * directory holds (no read of the library to name it), and loads it from there. The folders are the
 * user's own ({@code rwx------} where they are made); a copy is written to a temporary file and
 * renamed into place, so a process that finds the file finds it whole, and one whose size differs
 * from the entry's is written again. Each load marks its folder used (its modification time); the
 * folders of other jars unused for {@link #UNUSED_FOR} are removed, so upgrades do not pile up 15
 * MB each. A process still running from such a jar keeps the library it mapped; started again, it
 * copies it again.
 *
 * <p>The copy is loaded through {@code RocksDB.loadLibrary(List)}, the one call that marks the
 * library loaded for RocksJava (after a bare {@code System.load} its {@code loadLibrary()} would
 * still copy). That call looks for {@code Environment.getJniLibraryFileName("rocksdbjni")}, which
 * in RocksJava 10.10 is {@code librocksdbjnijni-linux64.so}, not the library's name: where the two
 * differ the folder also holds a symbolic link of the name it looks for.
 *
 * <p>Nothing is done when RocksJava would not copy: the library is in a folder of {@code
 * java.library.path} (as {@code bin/reconcile} and the agent processes of {@code replay} and {@code
 * bench} arrange), or {@code ROCKSDB_SHAREDLIB_DIR} is set. When the cache cannot be used (no home,
 * a read-only home, no entry for this platform in the jar), RocksJava loads the library its own
 * way, as before, and a warning says why.
 *
 * <p>docs/operations.md, "Memory".
 */
public final class RocksDbLibrary {
  private static final Logger LOG = LoggerFactory.getLogger(RocksDbLibrary.class);

  /** A folder of another jar's library unused this long is removed by the next load. */
  static final Duration UNUSED_FOR = Duration.ofDays(30);

  /** The folder names this class makes: the entry's CRC-32 in hex, a dash, its size. */
  private static final Pattern FOLDER = Pattern.compile("[0-9a-f]{8}-[0-9]+");

  private static volatile boolean loaded;

  private RocksDbLibrary() {}

  /** Loads the library once per process (later calls return at once); see the class comment. */
  public static void load() {
    if (loaded) {
      return;
    }
    synchronized (RocksDbLibrary.class) {
      if (loaded) {
        return;
      }
      String name = Environment.getJniLibraryFileName("rocksdb");
      Optional<Path> dir = Optional.empty();
      if (!onLibraryPath(System.getProperty("java.library.path", ""), name)
          && System.getenv("ROCKSDB_SHAREDLIB_DIR") == null) {
        try {
          Optional<Path> root = cacheRoot(System.getenv());
          if (root.isPresent()) {
            dir = extract(codeSource(), name, root.get());
          }
        } catch (IOException | RuntimeException e) {
          LOG.warn(
              "RocksDB's library not cached ({}); RocksJava copies it into {} for this process",
              e.toString(),
              System.getProperty("java.io.tmpdir"));
        }
      }
      if (dir.isPresent()) {
        try {
          RocksDB.loadLibrary(List.of(dir.get().toString()));
          loaded = true;
          return;
        } catch (UnsatisfiedLinkError e) {
          LOG.warn(
              "RocksDB's library in {} did not load ({}); RocksJava copies it into {}",
              dir.get(),
              e.getMessage(),
              System.getProperty("java.io.tmpdir"));
        }
      }
      RocksDB.loadLibrary();
      loaded = true;
    }
  }

  /** Whether a folder of {@code libraryPath} holds {@code name}. */
  static boolean onLibraryPath(String libraryPath, String name) {
    for (String d : libraryPath.split(File.pathSeparator)) {
      if (!d.isEmpty() && Files.isRegularFile(Path.of(d, name))) {
        return true;
      }
    }
    return false;
  }

  /** {@code $XDG_CACHE_HOME/reconcile/native}, else {@code $HOME/.cache/...}; empty without. */
  static Optional<Path> cacheRoot(Map<String, String> env) {
    String xdg = env.get("XDG_CACHE_HOME");
    if (xdg != null && xdg.startsWith("/")) {
      return Optional.of(Path.of(xdg, "reconcile", "native"));
    }
    String home = env.get("HOME");
    if (home != null && home.startsWith("/")) {
      return Optional.of(Path.of(home, ".cache", "reconcile", "native"));
    }
    return Optional.empty();
  }

  /** The jar RocksJava's classes came from (the shaded jar, or rocksdbjni's own). */
  private static Path codeSource() throws IOException {
    try {
      return Path.of(RocksDB.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException | NullPointerException e) {
      throw new IOException("no jar for RocksDB's classes", e);
    }
  }

  /**
   * The folder under {@code root} that holds entry {@code name} of {@code jar}, copied there if it
   * is not yet (or not whole); empty when {@code jar} is not a jar or has no such entry.
   */
  static Optional<Path> extract(Path jar, String name, Path root) throws IOException {
    if (!Files.isRegularFile(jar)) {
      return Optional.empty(); // classes from a folder: nothing to copy from
    }
    try (JarFile j = new JarFile(jar.toFile(), false)) {
      ZipEntry e = j.getEntry(name);
      if (e == null || e.getSize() < 0 || e.getCrc() < 0) {
        return Optional.empty();
      }
      Path dir = root.resolve(String.format("%08x-%d", e.getCrc(), e.getSize()));
      Path lib = dir.resolve(name);
      if (!Files.isRegularFile(lib) || Files.size(lib) != e.getSize()) {
        createPrivate(dir);
        copy(j, e, lib);
      }
      try {
        Files.setLastModifiedTime(dir, FileTime.from(Instant.now()));
      } catch (IOException notOurs) {
        // a cache folder this user may read but not write: the library is still there to load
        LOG.debug("cannot mark {} used: {}", dir, notOurs.toString());
      }
      removeUnused(root, dir, Instant.now().minus(UNUSED_FOR));
      String looked = Environment.getJniLibraryFileName("rocksdbjni");
      Path link = dir.resolve(looked);
      if (!looked.equals(name) && !Files.isSymbolicLink(link)) {
        try {
          Files.createSymbolicLink(link, Path.of(name));
        } catch (FileAlreadyExistsException madeMeanwhile) {
          // by another process
        }
      }
      return Optional.of(dir);
    }
  }

  /**
   * Removes the folders under {@code root}, other than {@code keep}, that this class made and that
   * were last used before {@code before}; a folder that cannot be removed is left (and logged).
   */
  static void removeUnused(Path root, Path keep, Instant before) {
    List<Path> old = new ArrayList<>();
    try (DirectoryStream<Path> folders = Files.newDirectoryStream(root)) {
      for (Path f : folders) {
        if (!f.equals(keep)
            && FOLDER.matcher(f.getFileName().toString()).matches()
            && Files.isDirectory(f, LinkOption.NOFOLLOW_LINKS)
            && Files.getLastModifiedTime(f).toInstant().isBefore(before)) {
          old.add(f);
        }
      }
    } catch (IOException e) {
      LOG.debug("cannot list {}: {}", root, e.toString());
      return;
    }
    for (Path f : old) {
      try (DirectoryStream<Path> files = Files.newDirectoryStream(f)) {
        for (Path file : files) {
          Files.deleteIfExists(file);
        }
        Files.deleteIfExists(f);
        LOG.info(
            "removed {}: another jar's copy of RocksDB's library, unused for {} days or more",
            f,
            UNUSED_FOR.toDays());
      } catch (IOException e) {
        LOG.warn("cannot remove {} (an unused copy of RocksDB's library): {}", f, e.toString());
      }
    }
  }

  /**
   * Copies entry {@code name} of {@code jar} into {@code dir} (made if missing) under the same
   * name, as {@link #extract} does: a temporary file, then a rename. False, and nothing made, when
   * the jar has no such entry.
   */
  public static boolean copyOut(Path jar, String name, Path dir) throws IOException {
    try (JarFile j = new JarFile(jar.toFile(), false)) {
      ZipEntry e = j.getEntry(name);
      if (e == null) {
        return false;
      }
      Files.createDirectories(dir);
      copy(j, e, dir.resolve(name));
      return true;
    }
  }

  /** Entry {@code e} of {@code j} into {@code lib}: a temporary file beside it, then a rename. */
  private static void copy(JarFile j, ZipEntry e, Path lib) throws IOException {
    Path tmp = Files.createTempFile(lib.getParent(), e.getName(), ".part");
    try {
      try (InputStream in = j.getInputStream(e)) {
        Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
      }
      if (Files.size(tmp) != e.getSize()) {
        throw new IOException(
            "copied "
                + Files.size(tmp)
                + " bytes of "
                + e.getName()
                + ", the jar says "
                + e.getSize());
      }
      try {
        Files.move(tmp, lib, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException x) {
        Files.move(tmp, lib, StandardCopyOption.REPLACE_EXISTING);
      }
    } finally {
      Files.deleteIfExists(tmp);
    }
  }

  /** Makes the folders of {@code dir} that are missing, each {@code rwx------}. */
  private static void createPrivate(Path dir) throws IOException {
    try {
      Files.createDirectories(
          dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    } catch (UnsupportedOperationException notPosix) {
      Files.createDirectories(dir);
    }
  }
}
