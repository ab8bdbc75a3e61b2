package dev.reconcile.bench;

import dev.reconcile.cli.AgentJvm;
import java.util.ArrayList;
import java.util.List;

/**
 * A child process of a benchmark: a JVM on this one's class path running {@code main}'s {@code
 * main} with an agent's JVM options ({@link AgentJvm#defaultOptions}, as {@code bin/reconcile} and
 * the catch-up bench give agents); its standard error goes to this process's.
 */
final class ChildJvm {
  private ChildJvm() {}

  static ProcessBuilder of(Class<?> main, String... args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(AgentJvm.JAVA.toString());
    cmd.addAll(AgentJvm.defaultOptions());
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(main.getName());
    cmd.addAll(List.of(args));
    return new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
  }
}
