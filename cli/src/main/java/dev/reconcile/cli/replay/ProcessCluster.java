package dev.reconcile.cli.replay;

import dev.reconcile.agent.AgentTestHooks;
import dev.reconcile.cli.AgentJvm;
import dev.reconcile.cli.FileTrees;
import dev.reconcile.cli.ReconcileCommand;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import java.util.jar.Manifest;

/**
 * Agents as separate OS processes ({@code java -jar reconcile.jar agent ...}), replica {@code i} on
 * 127.0.0.{10+i}; a crash is {@code kill -9} ({@link Process#destroyForcibly()}), a pause is {@code
 * kill -STOP}. Each agent's stderr (its log) goes to {@code LOGDIR/NAME.log}.
 */
public final class ProcessCluster extends HttpCluster {
  private final Path jar;
  private final Path logDir;
  private final Map<String, Process> processes = new ConcurrentHashMap<>();
  private Path libraryDir; // RocksDB's JNI library for the agents: see libraryOption
  private Optional<String> libraryOption;

  public ProcessCluster(Path jar, Path logDir) {
    if (!Files.isRegularFile(jar)) {
      throw new IllegalArgumentException(
          "no agent jar at "
              + jar
              + " (build it: ./mvnw -B -ntp -o -pl cli -am package -DskipTests)");
    }
    this.jar = jar;
    this.logDir = logDir;
  }

  /**
   * The shaded jar: system property {@code reconcile.jar}, else the jar this code runs from when it
   * is the runnable one ({@link #isRunnableJar}, whatever its file name), else {@code
   * cli/target/reconcile.jar} in the working directory or one of its parents.
   *
   * <p>Until this rule looked at the manifest it took the running jar only when its file was named
   * {@code reconcile.jar}: a copy under another name, run from the source tree, started its agents
   * from {@code cli/target/reconcile.jar}, and a comparison of two builds compared one with itself
   * (docs/benchmarks.md, section 3a).
   */
  public static Path locateJar() {
    String p = System.getProperty("reconcile.jar");
    if (p != null && !p.isBlank()) {
      return Path.of(p);
    }
    try {
      Path self =
          Path.of(ProcessCluster.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      if (isRunnableJar(self)) {
        return self;
      }
    } catch (URISyntaxException | RuntimeException e) {
      // no code source, or not a file: not from a jar
    }
    for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
      Path j = d.resolve("cli/target/reconcile.jar");
      if (Files.isRegularFile(j)) {
        return j;
      }
    }
    return Path.of("cli/target/reconcile.jar");
  }

  /**
   * Whether {@code path} is a jar file whose manifest starts the command line ({@code Main-Class}
   * {@link ReconcileCommand}): the shaded jar, under any name. The module's plain jar (the one
   * other modules' tests run from) has no {@code Main-Class}, and a folder of classes is not a
   * file.
   */
  static boolean isRunnableJar(Path path) {
    if (!Files.isRegularFile(path)) {
      return false;
    }
    try (JarFile jar = new JarFile(path.toFile())) {
      Manifest m = jar.getManifest();
      return m != null
          && ReconcileCommand.class
              .getName()
              .equals(m.getMainAttributes().getValue(Attributes.Name.MAIN_CLASS));
    } catch (IOException e) {
      return false; // not a jar
    }
  }

  @Override
  public String mode() {
    return "process";
  }

  @Override
  public String bindHost(int index) {
    return "127.0.0." + (10 + index);
  }

  @Override
  protected Endpoint launch(
      String name, int index, Map<String, String> config, AgentTestHooks hooks) throws Exception {
    Files.createDirectories(logDir);
    Path log = logDir.resolve(name + ".log");
    List<String> cmd = new ArrayList<>();
    cmd.add(AgentJvm.JAVA.toString());
    cmd.add("-Xmx256m");
    cmd.add("-XX:+UseSerialGC");
    cmd.add("-XX:TieredStopAtLevel=1");
    libraryOption().ifPresent(cmd::add);
    cmd.addAll(javaArgs(jar.toString(), config, hooks));
    Process p =
        new ProcessBuilder(cmd)
            .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .redirectInput(ProcessBuilder.Redirect.PIPE)
            .start();
    CompletableFuture<Endpoint> ready = new CompletableFuture<>();
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader r =
                  new BufferedReader(
                      new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                  Endpoint e = parseListening(line);
                  if (e != null) {
                    ready.complete(e);
                  }
                }
              } catch (IOException e) {
                // process gone
              }
              ready.completeExceptionally(
                  new IllegalStateException(
                      "agent "
                          + name
                          + " exited before listening (exit "
                          + exitOf(p)
                          + "); log: "
                          + tail(log)));
            },
            "agent-" + name + "-stdout");
    reader.setDaemon(true);
    reader.start();
    try {
      Endpoint e = ready.get(90, TimeUnit.SECONDS);
      processes.put(name, p);
      return e;
    } catch (TimeoutException e) {
      p.destroyForcibly();
      throw new IllegalStateException(
          "agent " + name + " did not listen within 90 s; log: " + tail(log));
    } catch (java.util.concurrent.ExecutionException e) {
      throw (Exception) e.getCause();
    }
  }

  /**
   * The option that has the agents load RocksDB's JNI library from one copy this cluster makes at
   * its first start and deletes at {@link #close}: otherwise each agent's JVM copies it into {@code
   * java.io.tmpdir}, and the agents a scenario kills ({@code kill -9}) leave 15 MB each there.
   */
  public synchronized Optional<String> libraryOption() throws IOException {
    if (libraryOption == null) {
      libraryDir = Files.createTempDirectory("reconcile-agent-library");
      libraryOption = AgentJvm.rocksDbLibraryOption(jar, libraryDir);
    }
    return libraryOption;
  }

  private static String exitOf(Process p) {
    try {
      return p.waitFor(2, TimeUnit.SECONDS) ? String.valueOf(p.exitValue()) : "still running";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "?";
    }
  }

  private static String tail(Path log) {
    try {
      List<String> l = Files.readAllLines(log, StandardCharsets.UTF_8);
      return String.join(" | ", l.subList(Math.max(0, l.size() - 5), l.size()));
    } catch (IOException e) {
      return "(no log)";
    }
  }

  @Override
  protected void kill(String name) throws Exception {
    Process p = processes.remove(name);
    if (p != null) {
      p.destroyForcibly();
      p.waitFor(20, TimeUnit.SECONDS);
    }
  }

  @Override
  protected void stop(String name) throws Exception {
    Process p = processes.remove(name);
    if (p != null) {
      p.destroy();
      if (!p.waitFor(20, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        p.waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  private void signal(String name, String sig) throws Exception {
    Process p = processes.get(name);
    if (p == null) {
      throw new IllegalStateException("replica " + name + " is down");
    }
    int rc =
        new ProcessBuilder("kill", "-" + sig, Long.toString(p.pid())).inheritIO().start().waitFor();
    if (rc != 0) {
      throw new IllegalStateException("kill -" + sig + " " + p.pid() + " failed with " + rc);
    }
  }

  @Override
  public boolean pause(String name) throws Exception {
    signal(name, "STOP");
    return true;
  }

  @Override
  public void resume(String name) throws Exception {
    signal(name, "CONT");
  }

  @Override
  public void close() {
    super.close();
    Path dir;
    synchronized (this) {
      dir = libraryDir;
      libraryDir = null;
      libraryOption = null;
    }
    if (dir != null) {
      try {
        FileTrees.delete(dir);
      } catch (IOException e) {
        // a copy left in the temporary folder; nothing else depends on it
      }
    }
  }
}
