package dev.reconcile.cli;

import dev.reconcile.cli.replay.Cluster;
import dev.reconcile.cli.replay.InJvmCluster;
import dev.reconcile.cli.replay.ProcessCluster;
import dev.reconcile.cli.replay.Scenario;
import dev.reconcile.cli.replay.ScenarioException;
import dev.reconcile.cli.replay.ScenarioParser;
import dev.reconcile.cli.replay.ScenarioReport;
import dev.reconcile.cli.replay.ScenarioRunner;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code reconcile replay SCENARIO...}: replays divergence scenarios (docs/replay.md) against real
 * agents, in this JVM or as OS processes, and prints a report per scenario. Exit 0 only if every
 * expectation of every scenario held, 1 if one failed, 2 on a bad scenario or trouble.
 */
@Command(
    name = "replay",
    mixinStandardHelpOptions = true,
    description = {
      "Replays divergence scenarios (YAML, see docs/replay.md) against real agents behind fault-injecting proxies",
      "and checks that replicas converge to the runner's model of the conflict rule with nothing lost.",
      "Exit status: 0 all expectations held, 1 some failed, 2 bad scenario or trouble."
    })
final class ReplayCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Parameters(arity = "1..*", paramLabel = "SCENARIO", description = "scenario files")
  List<Path> scenarios;

  @Option(
      names = "--mode",
      paramLabel = "MODE",
      description =
          "jvm (agents in this JVM, default) or process (java -jar reconcile.jar agent, kill -9)")
  String mode = "jvm";

  @Option(
      names = "--jar",
      paramLabel = "FILE",
      description = "agent jar for --mode process (default: this jar, or cli/target/reconcile.jar)")
  Path jar;

  @Option(
      names = "--work",
      paramLabel = "DIR",
      description =
          "where runs keep their data (default: a temporary directory, removed afterwards)")
  Path work;

  @Option(names = "--keep", description = "keep each run's data directories and logs")
  boolean keep;

  @Option(
      names = "--results",
      paramLabel = "FILE",
      description = "also write a Markdown table of per-scenario figures to FILE")
  Path results;

  @Option(
      names = {"-v", "--verbose"},
      description = "print each timeline step")
  boolean verbose;

  @Override
  public Integer call() {
    return Commands.guarded(spec.commandLine().getErr(), this::run);
  }

  private int run() throws Exception {
    if (!mode.equals("jvm") && !mode.equals("process")) {
      throw new CliException("--mode " + mode + ": expected jvm or process");
    }
    List<Scenario> parsed = new ArrayList<>();
    for (Path p : scenarios) {
      try {
        parsed.add(ScenarioParser.parse(p));
      } catch (ScenarioException e) {
        throw new CliException(e.getMessage());
      }
    }
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    Path root =
        work != null
            ? Files.createDirectories(work)
            : Files.createTempDirectory("reconcile-replay");
    List<ScenarioReport> reports = new ArrayList<>();
    boolean trouble = false;
    try {
      for (Scenario s : parsed) {
        Path runDir = root.resolve(s.name() + "-" + System.nanoTime());
        Cluster c =
            mode.equals("process")
                ? new ProcessCluster(
                    jar != null ? jar : ProcessCluster.locateJar(), runDir.resolve("logs"))
                : new InJvmCluster();
        try {
          ScenarioReport r = new ScenarioRunner(s, c, runDir, verbose ? err : null).run();
          reports.add(r);
          out.print(r.text());
          out.flush();
        } catch (ScenarioException e) {
          trouble = true;
          err.println("reconcile replay: " + e.getMessage());
          err.flush();
        } finally {
          if (!keep) {
            deleteTree(runDir);
          } else {
            err.println("reconcile replay: kept " + runDir);
          }
        }
      }
    } finally {
      if (work == null && !keep) {
        deleteTree(root);
      }
    }
    long passed = reports.stream().filter(ScenarioReport::passed).count();
    out.printf("%d passed, %d failed%n", passed, parsed.size() - passed);
    out.flush();
    if (results != null) {
      writeResults(results, reports);
    }
    if (trouble) {
      return ReconcileCommand.TROUBLE;
    }
    return passed == parsed.size() ? 0 : 1;
  }

  private void writeResults(Path file, List<ScenarioReport> reports) throws IOException {
    StringBuilder sb = new StringBuilder();
    sb.append("# Replay results\n\n");
    sb.append("Written by `reconcile replay --mode ")
        .append(mode)
        .append(" --results ")
        .append(file)
        .append(" SCENARIO...` over ")
        .append(reports.size())
        .append(" scenarios on ")
        .append(LocalDate.now(java.time.ZoneOffset.UTC))
        .append(" (")
        .append(Runtime.getRuntime().availableProcessors())
        .append(" cores). Scenario format and expectations: [replay.md](replay.md).\n\n");
    sb.append(
            "Rounds are the repair rounds the timeline and the runner started (background rounds are not counted);")
        .append(
            " protocol bytes are the initiator's session frames both ways except the record batches (handshake,"
                + " fingerprints, estimator, IBLTs or coded symbols, digest lists, results, the stream's acknowledgements,"
                + " verification: the agent's reconcile_protocol_bytes_total);")
        .append(
            " records moved and record bytes are the repair stream; time to converge runs from the start of the timeline")
        .append(" until every group of replicas had equal fingerprints.\n\n");
    sb.append(ScenarioReport.markdownHeader()).append('\n');
    for (ScenarioReport r : reports) {
      sb.append(r.markdownRow()).append('\n');
    }
    sb.append("\n## Checks\n\n");
    for (ScenarioReport r : reports) {
      sb.append("- **").append(r.name()).append("**: ");
      List<String> cs = new ArrayList<>();
      for (ScenarioReport.Check c : r.checks()) {
        cs.add((c.ok() ? "ok " : "FAIL ") + c.name() + " (" + c.detail() + ")");
      }
      sb.append(String.join("; ", cs)).append('\n');
    }
    Path parent = file.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    Files.writeString(file, sb.toString(), StandardCharsets.UTF_8);
  }

  private static void deleteTree(Path dir) {
    try {
      FileTrees.delete(dir);
    } catch (IOException e) {
      // best effort
    }
  }
}
