package dev.reconcile.it;

import dev.reconcile.agent.AgentTestHooks;
import dev.reconcile.cli.replay.HttpCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.testcontainers.containers.BindMode;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.output.OutputFrame;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

/**
 * Runner (c): each agent in its own container of the locally built {@link AgentImage}, host network
 * on 127.0.0.x, the run directory bind-mounted at the same path. Crash = docker kill (SIGKILL),
 * pause = docker pause (cgroup freezer), restart = a new container on the same data directory.
 */
final class ContainerCluster extends HttpCluster {
  private final String image;
  private final Path runDir;
  private final Map<String, GenericContainer<?>> containers = new ConcurrentHashMap<>();

  ContainerCluster(String image, Path runDir) {
    this.image = image;
    this.runDir = runDir;
  }

  @Override
  public String mode() {
    return "container";
  }

  @Override
  public String bindHost(int index) {
    return "127.0.0." + (30 + index);
  }

  @Override
  protected Endpoint launch(
      String name, int index, Map<String, String> config, AgentTestHooks hooks) {
    List<String> cmd =
        new ArrayList<>(List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"));
    cmd.addAll(javaArgs("/reconcile.jar", config, hooks));
    @SuppressWarnings("resource")
    GenericContainer<?> c =
        new GenericContainer<>(DockerImageName.parse(image))
            .withImagePullPolicy(n -> false)
            .withNetworkMode("host")
            .withFileSystemBind(runDir.toString(), runDir.toString(), BindMode.READ_WRITE)
            .withCommand(cmd.toArray(new String[0]))
            .waitingFor(
                Wait.forLogMessage(".*listening peer=.*", 1)
                    .withStartupTimeout(Duration.ofSeconds(90)));
    c.start();
    containers.put(name, c);
    Endpoint e = parseListening(c.getLogs(OutputFrame.OutputType.STDOUT));
    if (e == null) {
      throw new IllegalStateException(
          "agent " + name + " printed no listening line: " + c.getLogs());
    }
    return e;
  }

  @Override
  protected void kill(String name) {
    GenericContainer<?> c = containers.remove(name);
    if (c != null) {
      c.getDockerClient().killContainerCmd(c.getContainerId()).exec();
      c.stop();
    }
  }

  @Override
  protected void stop(String name) {
    GenericContainer<?> c = containers.remove(name);
    if (c != null) {
      c.getDockerClient().stopContainerCmd(c.getContainerId()).withTimeout(20).exec();
      c.stop();
    }
  }

  @Override
  public boolean pause(String name) {
    GenericContainer<?> c = containers.get(name);
    c.getDockerClient().pauseContainerCmd(c.getContainerId()).exec();
    return true;
  }

  @Override
  public void resume(String name) {
    GenericContainer<?> c = containers.get(name);
    c.getDockerClient().unpauseContainerCmd(c.getContainerId()).exec();
  }
}
