package dev.reconcile.cli;

import dev.reconcile.agent.AgentConfig;
import dev.reconcile.agent.AgentTestHooks;
import dev.reconcile.agent.ReplicaAgent;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code reconcile agent}: runs the replica agent until it is stopped (SIGINT/SIGTERM). Every
 * config key is also a flag ({@code --tombstone-grace 2d}), added by {@link #addConfigOptions} from
 * {@link AgentConfig#DEFAULTS}, so the help lists every key with its default.
 */
@Command(
    name = "agent",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    abbreviateSynopsis = true,
    description = {
      "Runs a replica agent: RocksDB under --data, the peer port, the HTTP API, background repair.",
      "",
      "Every config key (docs/operations.md) is given in --config FILE, with --set KEY=VALUE or as"
          + " a flag --KEY VALUE; flags override --set, which overrides the file. The keys, with"
          + " their defaults:",
    },
    footer = {
      "",
      "Example: reconcile agent --node-id a --data ./data/a --peers 127.0.0.1:7410 \\",
      "           --tombstone-grace 2d --rate-limit 8MiB"
    })
final class AgentCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  /** Faults injected for tests ({@link HookedAgentMain}); none from the command line. */
  AgentTestHooks hooks = AgentTestHooks.NONE;

  @Option(names = "--config", paramLabel = "FILE", description = "YAML or JSON config file")
  Path config;

  @Option(
      names = "--set",
      paramLabel = "KEY=VALUE",
      description = "any config key (repeatable); the same keys as the flags below")
  List<String> sets = List.of();

  /**
   * Adds one option {@code --KEY VALUE} per config key to the agent command's spec, in
   * documentation order, each with its description and default.
   */
  static void addConfigOptions(CommandSpec agent) {
    for (Map.Entry<String, String> e : AgentConfig.DEFAULTS.entrySet()) {
      String key = e.getKey();
      String def = e.getValue();
      String text = AgentConfig.DESCRIPTIONS.getOrDefault(key, "see docs/operations.md");
      agent.addOption(
          OptionSpec.builder("--" + key)
              .paramLabel(label(key, def))
              .type(String.class)
              .description(def.isEmpty() ? text : text + " (default: " + def + ")")
              .build());
    }
  }

  /** A parameter label from the kind of the default value. */
  private static String label(String key, String def) {
    if (key.endsWith("-listen")) {
      return "HOST:PORT";
    }
    if (key.equals("peers")) {
      return "HOST:PORT,...";
    }
    if (def.equals("true") || def.equals("false")) {
      return "BOOL";
    }
    if (def.matches("\\d+(ms|s|m|h|d)")) {
      return "DURATION";
    }
    if (def.matches("\\d+[KMG]iB") || key.endsWith("rate-limit")) {
      return "SIZE";
    }
    if (def.matches("[\\d.]+")) {
      return "N";
    }
    if (key.startsWith("tls-")) {
      return "FILE";
    }
    return key.equals("data") ? "DIR" : "VALUE";
  }

  @Override
  public Integer call() {
    return Commands.guarded(spec.commandLine().getErr(), this::run);
  }

  private int run() throws Exception {
    Map<String, String> o = new LinkedHashMap<>();
    for (String s : sets) {
      int eq = s.indexOf('=');
      if (eq <= 0) {
        throw new CliException("--set " + s + ": expected KEY=VALUE");
      }
      o.put(s.substring(0, eq).trim(), s.substring(eq + 1));
    }
    for (String key : AgentConfig.DEFAULTS.keySet()) {
      OptionSpec flag = spec.findOption("--" + key);
      if (flag != null && flag.getValue() != null) {
        o.put(key, flag.getValue());
      }
    }
    AgentConfig c;
    try {
      c = AgentConfig.load(config, o);
    } catch (AgentConfig.ConfigException e) {
      throw new CliException("config: " + e.getMessage());
    }
    ReplicaAgent agent;
    try {
      agent = ReplicaAgent.start(c, Estimators.production(), hooks);
    } catch (Exception e) {
      throw new CliException(
          "agent " + c.nodeId() + ": " + Commands.oneLine(e.getCause() == null ? e : e.getCause()));
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  agent.close();
                  stopped.countDown();
                },
                "agent-shutdown"));
    // Machine-readable line for scripts and tests: the ports actually bound.
    spec.commandLine()
        .getOut()
        .printf(
            "agent %s listening peer=%s:%d http=%s:%d%n",
            c.nodeId(),
            c.peerListen().host(),
            agent.peerPort(),
            c.httpListen().host(),
            agent.httpPort());
    spec.commandLine().getOut().flush();
    stopped.await();
    return 0;
  }
}
