package dev.reconcile.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.agent.AgentConfig;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** Every command answers {@code --help}; the agent's help lists its config keys as flags. */
class HelpTest {
  @TempDir Path dir;

  static Set<String> subcommands() {
    return ReconcileCommand.commandLine(new ReconcileCommand()).getSubcommands().keySet();
  }

  @Test
  void everySubcommandAnswersHelpWithItsUsageAndStatusZero() {
    assertThat(subcommands())
        .contains("agent", "demo", "diff", "estimate", "replay", "bench", "repair", "status");
    for (String cmd : subcommands()) {
      for (String flag : List.of("--help", "-h")) {
        Cli.Result r = Cli.run(cmd, flag);
        assertThat(r.status()).as("%s %s: %s", cmd, flag, r.err()).isZero();
        assertThat(r.err()).as("%s %s", cmd, flag).isEmpty();
        assertThat(r.out()).as("%s %s", cmd, flag).contains("Usage: reconcile " + cmd + " ");
      }
    }
    Cli.Result top = Cli.run("--help");
    assertThat(top.status()).isZero();
    assertThat(top.out()).contains("agent").contains("replay").contains("bench");
  }

  @Test
  void aCommandWithoutItsArgumentsPrintsItsUsage() {
    for (String cmd : List.of("repair", "status", "replay", "diff", "estimate")) {
      Cli.Result r = Cli.run(cmd);
      assertThat(r.status()).as(cmd).isEqualTo(2);
      assertThat(r.out()).as(cmd).isEmpty();
      assertThat(r.errLines().get(0)).as(cmd).startsWith("reconcile " + cmd + ": Missing required");
      assertThat(r.err()).as(cmd).contains("Usage: reconcile " + cmd);
    }
  }

  @Test
  void agentHelpListsEveryConfigKeyAsAFlagWithItsDefault() {
    String help = Cli.run("agent", "--help").out();
    for (String key : AgentConfig.DEFAULTS.keySet()) {
      assertThat(help).as(key).contains("--" + key + "=");
    }
    assertThat(help)
        .contains("--set=KEY=VALUE")
        .contains("--config=FILE")
        .contains("--tombstone-grace=DURATION")
        .contains("(default: 7d)")
        .contains("--rate-limit=SIZE")
        .contains("--purge-interval=DURATION")
        .contains("--max-session-bytes=SIZE")
        .doesNotContain("clock-offset")
        .doesNotContain("estimator-scale");
  }

  @Test
  void agentFlagsReachTheConfigAndOverrideSet() {
    String data = dir.resolve("a").toString();
    for (String[] args :
        List.of(
            new String[] {"--tombstone-grace", "soon"},
            new String[] {"--purge-interval", "often"},
            new String[] {"--rate-limit", "12zz"},
            new String[] {"--max-sessions", "0"},
            new String[] {"--set", "rate-limit=1MiB", "--rate-limit", "12zz"})) {
      String key = args[args.length - 2].substring(2);
      String[] all = new String[args.length + 5];
      all[0] = "agent";
      all[1] = "--node-id";
      all[2] = "a";
      all[3] = "--data";
      all[4] = data;
      System.arraycopy(args, 0, all, 5, args.length);
      Cli.Result r = Cli.run(all);
      assertThat(r.status()).as(String.join(" ", all)).isEqualTo(2);
      assertThat(r.errLines()).singleElement().asString().startsWith("reconcile: config: " + key);
    }
  }

  @Test
  void hooksAreOnlyArgumentsOfTheHookedEntryPoint() {
    Cli.Result r =
        Cli.run("agent", "--node-id", "a", "--data", dir.toString(), "--clock-offset", "5s");
    assertThat(r.status()).isEqualTo(2);
    assertThat(r.err()).contains("Unknown option").contains("'--clock-offset'");
    Cli.Result set =
        Cli.run("agent", "--node-id", "a", "--data", dir.toString(), "--set", "estimator-scale=2");
    assertThat(set.err()).contains("unknown config key 'estimator-scale'");
    java.io.StringWriter err = new java.io.StringWriter();
    int status =
        HookedAgentMain.run(
            new String[] {"--estimator-scale", "0", "--node-id", "a"},
            new java.io.PrintWriter(new java.io.StringWriter()),
            new java.io.PrintWriter(err, true));
    assertThat(status).isEqualTo(2);
    assertThat(err.toString()).contains("estimator-scale 0.0 outside (0, 1000]");
  }

  @Test
  void helpSubcommandNamesEveryCommand() {
    CommandLine cl = ReconcileCommand.commandLine(new ReconcileCommand());
    assertThat(cl.getUsageMessage()).contains("agent").contains("status").contains("repair");
  }
}
