package dev.reconcile.cli;

import dev.reconcile.agent.AgentTestHooks;
import dev.reconcile.cli.replay.TestHookKeys;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;

/**
 * {@code reconcile agent} with test hooks ({@link AgentTestHooks}: clock skew, scaled estimates),
 * the entry point the replay runner starts for a process or container replica whose scenario sets
 * them:
 *
 * <pre>
 *   java -cp reconcile.jar dev.reconcile.cli.HookedAgentMain \
 *        [--clock-offset -10s] [--estimator-scale 0.05] AGENT-OPTIONS...
 * </pre>
 *
 * The hooks come first; everything after them is {@code reconcile agent}'s own options. They are
 * not options of {@code reconcile agent} nor config keys, so no production agent runs with them.
 */
public final class HookedAgentMain {
  private HookedAgentMain() {}

  /** Arguments after {@code java -cp JAR}: this class, the hooks, then the agent's options. */
  public static List<String> args(AgentTestHooks hooks, List<String> agentOptions) {
    List<String> a = new ArrayList<>();
    a.add(HookedAgentMain.class.getName());
    a.addAll(TestHookKeys.args(hooks));
    a.addAll(agentOptions);
    return a;
  }

  /** Runs the agent with the leading hooks of {@code args}; returns the exit status. */
  static int run(String[] args, PrintWriter out, PrintWriter err) {
    Map<String, String> hooks = new HashMap<>();
    int i = 0;
    while (i + 1 < args.length
        && args[i].startsWith("--")
        && TestHookKeys.KEYS.contains(args[i].substring(2))) {
      hooks.put(args[i].substring(2), args[i + 1]);
      i += 2;
    }
    AgentTestHooks h;
    try {
      h = TestHookKeys.parse(hooks);
    } catch (IllegalArgumentException e) {
      err.println("reconcile agent: " + e.getMessage());
      err.flush();
      return ReconcileCommand.TROUBLE;
    }
    CommandLine cl = ReconcileCommand.commandLine(new ReconcileCommand());
    cl.setOut(out);
    cl.setErr(err);
    ((AgentCommand) cl.getSubcommands().get("agent").getCommand()).hooks = h;
    List<String> rest = new ArrayList<>();
    rest.add("agent");
    rest.addAll(List.of(args).subList(i, args.length));
    return cl.execute(rest.toArray(new String[0]));
  }

  public static void main(String[] args) {
    PrintWriter out =
        new PrintWriter(
            new OutputStreamWriter(
                new FileOutputStream(FileDescriptor.out), StandardCharsets.UTF_8),
            false);
    PrintWriter err =
        new PrintWriter(
            new OutputStreamWriter(
                new FileOutputStream(FileDescriptor.err), StandardCharsets.UTF_8),
            true);
    int status = run(args, out, err);
    out.flush();
    err.flush();
    System.exit(status);
  }
}
