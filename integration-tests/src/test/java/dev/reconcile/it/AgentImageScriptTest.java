package dev.reconcile.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.reconcile.agent.AgentCluster;
import dev.reconcile.cli.replay.ProcessCluster;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/agent-image --no-build} (the documented container image, docs/operations.md) makes a
 * root filesystem that runs the agent on its own: the test starts an agent in cluster mode inside
 * it with chroot(8), so nothing from the host's libraries or runtime can be used. Needs root and
 * chroot (skipped otherwise, with the reason); the image build itself needs Docker and is what the
 * container suite runs.
 */
class AgentImageScriptTest {
  @TempDir Path dir;

  static Path script() {
    for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
      Path s = d.resolve("bin/agent-image");
      if (Files.isRegularFile(s)) {
        return s;
      }
    }
    throw new IllegalStateException(
        "bin/agent-image not found above " + Path.of("").toAbsolutePath());
  }

  @Test
  void rootFilesystemRunsAnAgentInClusterModeUnderChroot() throws Exception {
    Path chroot = Path.of("/usr/sbin/chroot");
    assumeTrue(Files.isExecutable(chroot), "no /usr/sbin/chroot");
    assumeTrue(
        "root".equals(System.getProperty("user.name")),
        "chroot needs root; running as " + System.getProperty("user.name"));
    Path jar = ProcessCluster.locateJar();
    assertThat(Files.isRegularFile(jar)).as("agent jar %s", jar).isTrue();
    Path out = dir.resolve("image");
    Process build =
        new ProcessBuilder(
                script().toString(), "--no-build", "--jar", jar.toString(), "--out", out.toString())
            .redirectErrorStream(true)
            .start();
    String log = new String(build.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(build.waitFor(5, TimeUnit.MINUTES)).isTrue();
    assertThat(build.exitValue()).as(log).isZero();
    String dockerfile = Files.readString(out.resolve("Dockerfile"));
    assertThat(dockerfile).startsWith("FROM scratch").contains("USER 65532:65532");
    Path root = out.resolve("rootfs");
    assertThat(root.resolve("java/bin/java")).isExecutable();
    // Local name resolution only (no DNS traffic leaves the machine).
    Files.writeString(root.resolve("etc/resolv.conf"), "nameserver 127.0.0.1\n");
    Files.createDirectories(root.resolve("data/a"));
    int clusterPort = AgentCluster.clusterPort("127.0.0.27");
    // Without /proc (Docker mounts it; chroot does not) the loader cannot expand $ORIGIN.
    ProcessBuilder pb =
        new ProcessBuilder(
            List.of(
                chroot.toString(),
                root.toString(),
                "/java/bin/java",
                "-Xmx256m",
                "-XX:+UseSerialGC",
                "-jar",
                "/reconcile.jar",
                "agent",
                "--node-id",
                "a",
                "--data",
                "/data/a",
                "--peer-listen",
                "127.0.0.27:0",
                "--http-listen",
                "127.0.0.27:0",
                "--cluster-listen",
                "127.0.0.27:" + clusterPort,
                "--cluster-seeds",
                "127.0.0.27:" + clusterPort));
    pb.environment().clear();
    pb.environment().put("LD_LIBRARY_PATH", "/java/lib:/java/lib/server");
    pb.redirectError(dir.resolve("agent.log").toFile());
    Process agent = pb.start();
    try {
      CompletableFuture<String> listening =
          CompletableFuture.supplyAsync(
              () -> {
                try (BufferedReader r =
                    new BufferedReader(
                        new InputStreamReader(agent.getInputStream(), StandardCharsets.UTF_8))) {
                  String line;
                  while ((line = r.readLine()) != null) {
                    if (line.contains("listening")) {
                      return line;
                    }
                  }
                  return "";
                } catch (java.io.IOException e) {
                  return "";
                }
              });
      String line = listening.get(120, TimeUnit.SECONDS);
      Matcher m = Pattern.compile("http=(\\S+)").matcher(line);
      assertThat(m.find())
          .as("listening line %s; log: %s", line, Files.readString(dir.resolve("agent.log")))
          .isTrue();
      HttpResponse<String> r =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(URI.create("http://" + m.group(1) + "/cluster")).build(),
                  HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.body()).contains("\"nodeId\" : \"a\"").contains("127.0.0.27:" + clusterPort);
      // The store is open: RocksJava found its library in /usr/lib, it put no copy in /tmp.
      assertThat(root.resolve("usr/lib/librocksdbjni-linux64.so")).isRegularFile();
      try (Stream<Path> inTmp = Files.list(root.resolve("tmp"))) {
        assertThat(inTmp.map(f -> f.getFileName().toString()))
            .noneMatch(f -> f.startsWith("librocksdbjni"));
      }
    } finally {
      agent.destroy();
      if (!agent.waitFor(30, TimeUnit.SECONDS)) {
        agent.destroyForcibly();
      }
    }
  }
}
