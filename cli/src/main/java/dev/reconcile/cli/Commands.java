package dev.reconcile.cli;

import java.io.PrintWriter;
import java.util.concurrent.Callable;

/** Helpers shared by the subcommands. */
final class Commands {
  private Commands() {}

  /**
   * Runs {@code body}; a {@link CliException} (or any other failure) becomes one line on {@code
   * err} and exit status 2, so the status is right however the {@code CommandLine} was built.
   */
  static int guarded(PrintWriter err, Callable<Integer> body) {
    try {
      return body.call();
    } catch (CliException e) {
      err.println("reconcile: " + e.getMessage());
      err.flush();
      return ReconcileCommand.TROUBLE;
    } catch (OutOfMemoryError e) {
      err.println("reconcile: out of memory (raise the heap with JAVA_OPTS=-Xmx...)");
      err.flush();
      return ReconcileCommand.TROUBLE;
    } catch (Exception e) {
      err.println("reconcile: internal error: " + oneLine(e));
      err.flush();
      return ReconcileCommand.TROUBLE;
    }
  }

  static String oneLine(Throwable t) {
    String m = t instanceof CliException ? t.getMessage() : String.valueOf(t);
    return m.replace('\n', ' ').replace('\r', ' ');
  }

  static String seconds(long nanos) {
    return String.format("%.2f s", nanos / 1e9);
  }
}
