package dev.reconcile.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.core.ExactEstimator;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The command line {@code main} builds: only the named subcommand, or all of them. */
class ReconcileCommandTest {
  @TempDir Path dir;

  @Test
  void nettysJfrEventsAreOffUnlessTheUserSaysOtherwise() {
    Properties p = new Properties();
    ReconcileCommand.setProcessDefaults(p);
    assertThat(p.getProperty(ReconcileCommand.NETTY_JFR)).isEqualTo("false");
    Properties user = new Properties();
    user.setProperty(ReconcileCommand.NETTY_JFR, "true");
    ReconcileCommand.setProcessDefaults(user);
    assertThat(user.getProperty(ReconcileCommand.NETTY_JFR)).isEqualTo("true");
  }

  private static CommandLine forArgs(String... args) {
    return ReconcileCommand.commandLine(new ReconcileCommand(ExactEstimator.factory(1.0)), args);
  }

  @Test
  void aNamedSubcommandIsRegisteredAlone() {
    assertThat(forArgs("diff", "file:a", "file:b").getSubcommands()).containsOnlyKeys("diff");
    assertThat(forArgs("estimate").getSubcommands()).containsOnlyKeys("estimate");
  }

  @Test
  void helpVersionAndUnknownWordsSeeEverySubcommand() {
    for (String[] args :
        new String[][] {{}, {"help"}, {"--help"}, {"-V"}, {"dif"}, {"file:a", "diff"}}) {
      assertThat(forArgs(args).getSubcommands())
          .as(String.join(" ", args))
          .hasSize(ReconcileCommand.SUBCOMMANDS.size())
          .containsKeys("agent", "diff", "estimate", "bench", "help");
    }
  }

  @Test
  void theListIsTheAnnotation() {
    assertThat(ReconcileCommand.SUBCOMMANDS)
        .containsExactly(
            ReconcileCommand.class.getAnnotation(CommandLine.Command.class).subcommands());
  }

  @Test
  void theNamesAreTheAnnotations() {
    for (Class<?> c : ReconcileCommand.SUBCOMMANDS) {
      if (c == CommandLine.HelpCommand.class) {
        continue;
      }
      String name = c.getAnnotation(CommandLine.Command.class).name();
      assertThat(ReconcileCommand.SUBCOMMANDS_BY_NAME).as(name).containsEntry(name, c);
    }
    assertThat(ReconcileCommand.SUBCOMMANDS_BY_NAME)
        .hasSize(ReconcileCommand.SUBCOMMANDS.size() - 1);
    CommandLine.Command root = ReconcileCommand.class.getAnnotation(CommandLine.Command.class);
    assertThat(root.name()).isEqualTo(ReconcileCommand.NAME);
    assertThat(root.version()).containsExactly(ReconcileCommand.VERSION);
  }

  /** {@code reconcile diff -V} printed nothing: picocli gives a subcommand no version. */
  @Test
  void everySubcommandPrintsTheVersion() {
    for (String name : ReconcileCommand.SUBCOMMANDS_BY_NAME.keySet()) {
      for (boolean alone : new boolean[] {true, false}) {
        StringWriter out = new StringWriter();
        CommandLine cl =
            alone
                ? forArgs(name, "--version")
                : ReconcileCommand.commandLine(new ReconcileCommand(ExactEstimator.factory(1.0)));
        cl.setOut(new PrintWriter(out, true));
        assertThat(cl.execute(name, "--version")).as(name).isZero();
        assertThat(out.toString())
            .as(name + (alone ? " alone" : ""))
            .isEqualTo("reconcile 0.1.0\n");
      }
    }
  }

  @Test
  void usageOfALoneSubcommandNamesTheWholeCommand() {
    StringWriter out = new StringWriter();
    CommandLine cl = forArgs("diff", "--help");
    cl.setOut(new PrintWriter(out, true));
    assertThat(cl.execute("diff", "--help")).isZero();
    assertThat(out.toString()).startsWith("Usage: reconcile diff ");
    StringWriter err = new StringWriter();
    CommandLine bad = forArgs("diff", "--format", "xml");
    bad.setErr(new PrintWriter(err, true));
    assertThat(bad.execute("diff", "--format", "xml")).isEqualTo(2);
    assertThat(err.toString())
        .startsWith("reconcile diff: Invalid value for option '--format'")
        .endsWith("(see 'reconcile diff --help')\n");
  }

  @Test
  void diffRunsTheSameEitherWay() throws Exception {
    Path a = Files.write(dir.resolve("a"), "k\t1\nx\t2\n".getBytes(StandardCharsets.US_ASCII));
    Path b = Files.write(dir.resolve("b"), "k\t1\ny\t2\n".getBytes(StandardCharsets.US_ASCII));
    String[] args = {"diff", "-q", "file:" + a, "file:" + b};
    CommandLine one = forArgs(args);
    CommandLine all =
        ReconcileCommand.commandLine(new ReconcileCommand(ExactEstimator.factory(1.0)));
    String[] outs = new String[2];
    int i = 0;
    for (CommandLine cl : new CommandLine[] {one, all}) {
      StringWriter out = new StringWriter();
      cl.setOut(new PrintWriter(out, true));
      cl.setErr(new PrintWriter(new StringWriter(), true));
      assertThat(cl.execute(args)).isEqualTo(1);
      outs[i++] = out.toString();
    }
    assertThat(outs[0]).isEqualTo("< x\n> y\n").isEqualTo(outs[1]);
  }
}
