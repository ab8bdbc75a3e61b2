package dev.reconcile.cli;

import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.HashSpec;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The {@code reconcile} command. Each subcommand is one class listed in {@code subcommands} (and in
 * {@link #SUBCOMMANDS}); a new one ({@code agent}, {@code repair}, ...) is added by writing its
 * class and listing it in both.
 *
 * <p>Exit status follows diff(1): 0 same, 1 different, 2 trouble. Errors are one line on stderr,
 * {@code reconcile: WHAT: PROBLEM}.
 */
@Command(
    name = ReconcileCommand.NAME,
    mixinStandardHelpOptions = true,
    version = ReconcileCommand.VERSION,
    description = ReconcileCommand.DESCRIPTION,
    subcommands = {
      AgentCommand.class,
      DemoCommand.class,
      DiffCommand.class,
      EstimateCommand.class,
      ReplayCommand.class,
      BenchCommand.class,
      RepairCommand.class,
      StatusCommand.class,
      CommandLine.HelpCommand.class
    })
public final class ReconcileCommand implements Callable<Integer> {
  /** The subcommands of the annotation, in its order. */
  static final List<Class<?>> SUBCOMMANDS =
      List.of(
          AgentCommand.class,
          DemoCommand.class,
          DiffCommand.class,
          EstimateCommand.class,
          ReplayCommand.class,
          BenchCommand.class,
          RepairCommand.class,
          StatusCommand.class,
          CommandLine.HelpCommand.class);

  /**
   * The subcommands by name (each class's {@code @Command(name)}, which a test checks): the command
   * line of a named subcommand is made without reading any annotation but that subcommand's.
   * Reading the root's annotation resolves its {@code subcommands}, which loads and links every
   * subcommand class and what their signatures name: a tenth of a one-shot diff's start-up.
   */
  static final Map<String, Class<?>> SUBCOMMANDS_BY_NAME =
      Map.of(
          "agent", AgentCommand.class,
          "demo", DemoCommand.class,
          "diff", DiffCommand.class,
          "estimate", EstimateCommand.class,
          "replay", ReplayCommand.class,
          "bench", BenchCommand.class,
          "repair", RepairCommand.class,
          "status", StatusCommand.class);

  static final String NAME = "reconcile";

  /** What {@code --version} prints, for the root command and every subcommand. */
  static final String VERSION = "reconcile 0.1.0";

  static final String DESCRIPTION =
      "Keeps key-value replicas identical by set reconciliation with IBLTs.";

  /** Exit status: the inputs are the same. */
  static final int SAME = 0;

  /** Exit status: the inputs differ. */
  static final int DIFFERENT = 1;

  /** Exit status: trouble (bad arguments, missing or corrupt input). */
  static final int TROUBLE = 2;

  private final Supplier<EstimatorFactory> estimators;

  @Spec CommandSpec spec;

  public ReconcileCommand() {
    this(Estimators::production);
  }

  /** With another difference estimator (tests use an exact one for speed). */
  public ReconcileCommand(EstimatorFactory estimators) {
    this(() -> estimators);
  }

  private ReconcileCommand(Supplier<EstimatorFactory> estimators) {
    this.estimators = estimators;
  }

  EstimatorFactory estimators() {
    return estimators.get();
  }

  @Override
  public Integer call() {
    throw new ParameterException(spec.commandLine(), "missing subcommand");
  }

  /**
   * A command line with the error handling {@code main} uses: a usage error is one line ({@code
   * reconcile diff: MESSAGE (see 'reconcile diff --help')}) and exit status 2; a subcommand given
   * without any argument when it needs some prints that line and then its usage (on stderr).
   */
  public static CommandLine commandLine(ReconcileCommand command) {
    return handled(withAgentOptions(new CommandLine(command)));
  }

  /**
   * {@link #commandLine(ReconcileCommand)} for the arguments {@code args}: when the first one names
   * a subcommand, the root command is built without reading its annotation and only that subcommand
   * is registered. Picocli otherwise builds the model of every subcommand by reflection when the
   * command line is made, which costs a one-shot {@code diff} a noticeable part of its start-up;
   * help, version and unknown subcommands still see them all. The root's own {@code --help} and
   * {@code --version} are left out then: after a subcommand's name, those words are the
   * subcommand's.
   */
  static CommandLine commandLine(ReconcileCommand command, String[] args) {
    Class<?> named = args.length > 0 ? SUBCOMMANDS_BY_NAME.get(args[0]) : null;
    if (named == null) {
      return commandLine(command);
    }
    CommandSpec spec = CommandSpec.wrapWithoutInspection(command).name(NAME).version(VERSION);
    spec.usageMessage().description(DESCRIPTION);
    CommandLine cl = new CommandLine(spec);
    cl.addSubcommand(named);
    return handled(withAgentOptions(cl));
  }

  /** Every agent config key is also a flag of {@code reconcile agent}. */
  private static CommandLine withAgentOptions(CommandLine cl) {
    CommandLine agent = cl.getSubcommands().get("agent");
    if (agent != null) {
      AgentCommand.addConfigOptions(agent.getCommandSpec());
    }
    return cl;
  }

  private static CommandLine handled(CommandLine cl) {
    // A subcommand's -V prints the command's version (picocli leaves a subcommand's empty).
    for (CommandLine sub : cl.getSubcommands().values()) {
      if (sub.getCommandSpec().version().length == 0) {
        sub.getCommandSpec().version(VERSION);
      }
    }
    cl.setParameterExceptionHandler(
        (ex, args) -> {
          CommandLine c = ex.getCommandLine();
          String name = c.getCommandSpec().qualifiedName();
          // picocli prefixes the messages of argument groups with "Error: "; ours say where.
          String message = String.valueOf(ex.getMessage()).replaceFirst("^Error: ", "");
          if (c != cl && args.length == 1 && args[0].equals(c.getCommandName())) {
            c.getErr().println(name + ": " + message);
            c.usage(c.getErr());
            c.getErr().flush();
            return TROUBLE;
          }
          c.getErr().println(name + ": " + message + " (see '" + name + " --help')");
          c.getErr().flush();
          return TROUBLE;
        });
    cl.setExecutionExceptionHandler(
        (ex, c, parsed) -> {
          c.getErr().println("reconcile: " + Commands.oneLine(ex));
          c.getErr().flush();
          return TROUBLE;
        });
    return cl;
  }

  /** The system property that turns Netty's JFR events on or off. */
  static final String NETTY_JFR = "io.netty.jfr.enabled";

  /**
   * Process-wide settings made before any command runs, where {@code properties} (the system
   * properties) do not already say otherwise.
   *
   * <p>Netty's JFR events off ({@value #NETTY_JFR} {@code false}). Netty 4.2's allocator emits JFR
   * events about its chunks and buffers, and the first use of their classes in a just-started
   * process initializes JFR's metadata, reflects on the events' annotations and generates event
   * handlers with ASM: 110-200 ms and 0.15-0.3 CPU-s of a new agent's first round, which is its
   * catch-up (docs/benchmarks.md, section 3a, "Netty's JFR events"). Nothing here reads those
   * events; {@code -Dio.netty.jfr.enabled=true} brings them back. A JFR recording of the process is
   * not affected.
   */
  static void setProcessDefaults(Properties properties) {
    if (properties.getProperty(NETTY_JFR) == null) {
      properties.setProperty(NETTY_JFR, "false");
    }
  }

  /**
   * For a one-shot command ({@code diff}, {@code estimate}), starts on another thread the set-up it
   * needs whatever its arguments, while this one builds picocli's model: the production estimator's
   * classes (whose protobuf messages start {@code java.util.logging}) and a hash spec (whose seed
   * fingerprint starts the JDK's security providers for SHA-256), about 15 ms of a one-shot
   * command's start on this machine. The command's own thread waits for a class being initialized
   * there rather than doing it twice.
   */
  static void prepareInBackground(String[] args) {
    Class<?> named = args.length > 0 ? SUBCOMMANDS_BY_NAME.get(args[0]) : null;
    if (named != DiffCommand.class && named != EstimateCommand.class) {
      return;
    }
    Thread t =
        new Thread(
            () -> {
              Estimators.production();
              HashSpec.xxh3(0);
            },
            "reconcile-prepare");
    t.setDaemon(true);
    t.start();
  }

  public static void main(String[] args) {
    setProcessDefaults(System.getProperties()); // before Netty's classes initialize
    prepareInBackground(args);
    CommandLine cl = commandLine(new ReconcileCommand(), args);
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
    cl.setOut(out);
    cl.setErr(err);
    int status = cl.execute(args);
    out.flush();
    err.flush();
    System.exit(status);
  }
}
