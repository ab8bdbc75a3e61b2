package dev.reconcile.cli;

import dev.reconcile.cli.bench.CatchupBench;
import dev.reconcile.cli.replay.ProcessCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * {@code reconcile bench}'s options of the {@code catchup} experiment ({@link CatchupBench}: a new
 * replica's catch-up by separate, just-started agent processes), a mixin of {@link BenchCommand}.
 */
final class CatchupOptions {
  @Option(
      names = "--catchup-records",
      description = "records of the catch-up source with small values (default: ${DEFAULT-VALUE})")
  int records = 200_000;

  @Option(
      names = "--catchup-value-bytes",
      description = "value size of the small catch-up (default: ${DEFAULT-VALUE})")
  int valueBytes = 100;

  @Option(
      names = "--catchup-large-records",
      description =
          "records of the catch-up source with large values, 0 for none (default:"
              + " ${DEFAULT-VALUE})")
  int largeRecords = 4096;

  @Option(
      names = "--catchup-large-value-bytes",
      description = "value size of the large catch-up (default: ${DEFAULT-VALUE})")
  int largeValueBytes = 64 << 10;

  @Option(
      names = "--catchup-trials",
      description = "cold trials per catch-up configuration (default: ${DEFAULT-VALUE})")
  int trials = 3;

  @Option(
      names = "--catchup-jfr",
      paramLabel = "DIR",
      description = "record a JFR profile of every catch-up agent process into DIR")
  Path jfr;

  @Option(
      names = "--catchup-jfr-settings",
      paramLabel = "SETTINGS",
      description =
          "JFR settings of --catchup-jfr: a name (profile, default) or a .jfc file, for example"
              + " one with 1 ms method sampling (default: ${DEFAULT-VALUE})")
  String jfrSettings = "profile";

  @Option(
      names = "--catchup-jvm-option",
      paramLabel = "OPTION",
      description = "extra JVM option for the catch-up agent processes (repeatable)")
  List<String> jvmOptions = List.of();

  @Option(
      names = "--catchup-class-archive",
      arity = "1",
      paramLabel = "BOOL",
      description =
          "whether the catch-up agent processes map a class-data sharing archive, as bin/reconcile's"
              + " agents do (made once per run by a training demo, a few seconds; default true)")
  boolean classArchive = true;

  @Option(
      names = "--catchup-warm-source",
      arity = "1",
      paramLabel = "BOOL",
      description =
          "whether one source agent, warmed by an untimed catch-up, serves every catch-up trial (a"
              + " peer in service) instead of a just-started one per trial; the new replica is"
              + " just started either way (default false)")
  boolean warmSource = false;

  @Option(
      names = "--catchup-set",
      paramLabel = "KEY=VALUE",
      description = "extra agent config for the catch-up agent processes (repeatable)")
  List<String> setArgs = List.of();

  /**
   * The catch-up configurations of these options: the small values' and, unless {@code
   * --catchup-large-records 0}, the large values', their agents run from the shaded jar.
   */
  List<CatchupBench.Config> configs(Path work, long seed) {
    if (trials < 1 || records < 1 || largeRecords < 0) {
      throw new CliException("bench: --catchup-trials and --catchup-records must be >= 1");
    }
    Path jar = ProcessCluster.locateJar();
    if (!Files.isRegularFile(jar)) {
      throw new CliException(
          "bench: the catchup experiment runs agent processes from the shaded jar, and there is"
              + " none at "
              + jar
              + " (build it: ./mvnw -B -ntp -pl cli -am package -DskipTests)");
    }
    Map<String, String> sets = BenchCommand.keyValues("--catchup-set", setArgs);
    List<CatchupBench.Config> out = new ArrayList<>();
    out.add(config(records, valueBytes, jar, work, sets, seed));
    if (largeRecords > 0) {
      out.add(config(largeRecords, largeValueBytes, jar, work, sets, seed + 1));
    }
    return out;
  }

  private CatchupBench.Config config(
      int n, int bytes, Path jar, Path work, Map<String, String> sets, long seed) {
    return new CatchupBench.Config(
        n,
        bytes,
        trials,
        jar,
        work,
        jfr,
        jfrSettings,
        jvmOptions,
        classArchive,
        sets,
        warmSource,
        seed);
  }
}
