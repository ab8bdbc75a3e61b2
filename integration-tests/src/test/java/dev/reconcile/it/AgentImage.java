package dev.reconcile.it;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.testcontainers.DockerClientFactory;

/**
 * Builds the agent image locally (no registry is reachable): {@code FROM scratch} with a jlink'ed
 * Java runtime under /java, the shaded reconcile.jar, the shared libraries the runtime and
 * RocksDB's JNI library link against (found with ldd), and an empty /tmp for RocksDB's native
 * extraction.
 */
final class AgentImage {
  static final String NAME = "reconcile-agent-it:local";
  private static final String MODULES =
      "java.base,java.logging,java.management,java.naming,java.net.http,java.xml,java.sql,jdk.unsupported,jdk.crypto.ec,jdk.zipfs"
          // Cluster mode: Hazelcast sets TCP keep-alive options (jdk.net) and reads JVM metrics.
          + ",jdk.net,jdk.management";

  private AgentImage() {}

  static String build(Path jar, Path work) throws Exception {
    Path ctx = work.resolve("image");
    Path root = ctx.resolve("rootfs");
    Files.createDirectories(root.resolve("tmp"));
    Path jlink = Path.of(System.getProperty("java.home"), "bin", "jlink");
    run(
        List.of(
            jlink.toString(),
            "--add-modules",
            MODULES,
            "--strip-debug",
            "--no-header-files",
            "--no-man-pages",
            "--output",
            root.resolve("java").toString()));
    Files.copy(jar, root.resolve("reconcile.jar"), StandardCopyOption.REPLACE_EXISTING);
    // Shared libraries: ldd closure of the runtime's binaries and of RocksDB's JNI library.
    List<Path> binaries = new ArrayList<>();
    try (Stream<Path> s = Files.walk(root.resolve("java"))) {
      s.filter(p -> p.toString().endsWith(".so") || p.endsWith(Path.of("bin", "java")))
          .forEach(binaries::add);
    }
    Path rocks = work.resolve("librocksdbjni-linux64.so");
    try (ZipFile z = new ZipFile(jar.toFile())) {
      ZipEntry e = z.getEntry("librocksdbjni-linux64.so");
      if (e != null) {
        Files.copy(z.getInputStream(e), rocks, StandardCopyOption.REPLACE_EXISTING);
        binaries.add(rocks);
      }
    }
    Set<String> libs = new LinkedHashSet<>();
    Deque<Path> todo = new ArrayDeque<>(binaries);
    while (!todo.isEmpty()) {
      for (String line : run(List.of("ldd", todo.pop().toString())).split("\n")) {
        String t = line.trim();
        String path = t.contains("=>") ? t.substring(t.indexOf("=>") + 2).trim() : t;
        path = path.replaceAll("\\s*\\(0x[0-9a-f]+\\)$", "").trim();
        if (path.startsWith("/") && !Path.of(path).normalize().startsWith(root) && libs.add(path)) {
          todo.add(Path.of(path));
        }
      }
    }
    for (String lib : libs) {
      Path src = Path.of(lib);
      Path dst = root.resolve(lib.substring(1));
      Files.createDirectories(dst.getParent());
      Files.copy(src, dst, StandardCopyOption.REPLACE_EXISTING); // follows symlinks
    }
    Files.writeString(
        ctx.resolve("Dockerfile"),
        "FROM scratch\nCOPY rootfs/ /\nENTRYPOINT [\"/java/bin/java\"]\n",
        StandardCharsets.UTF_8);
    // Built through the daemon's API with pull off: Testcontainers' ImageFromDockerfile would first
    // try
    // to pull the FROM image ('scratch') from a registry that is not reachable.
    long t0 = System.nanoTime();
    String id =
        DockerClientFactory.instance()
            .client()
            .buildImageCmd(ctx.toFile())
            .withTags(Set.of(NAME))
            .withPull(false)
            .start()
            .awaitImageId(10, TimeUnit.MINUTES);
    System.out.printf(
        "agent image %s (%s) built in %d ms%n", NAME, id, (System.nanoTime() - t0) / 1_000_000);
    return NAME;
  }

  static String run(List<String> cmd) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(5, TimeUnit.MINUTES) || p.exitValue() != 0) {
      throw new IOException(String.join(" ", cmd) + " failed: " + out);
    }
    return out;
  }
}
