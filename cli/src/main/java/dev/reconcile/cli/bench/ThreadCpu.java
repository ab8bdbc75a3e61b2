package dev.reconcile.cli.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;

/**
 * Where a process's CPU time went, thread by thread, from Linux's per-task scheduler statistics:
 * {@code /proc/PID/task/TID/schedstat} (nanoseconds on a CPU, nanoseconds runnable but waiting for
 * one, time slices) and {@code comm} (the thread's name, which the JVM sets from the Java thread's,
 * cut to 15 characters).
 *
 * <p>Threads are sorted into the JIT's compiler threads ({@code C1 CompilerThre}, {@code C2
 * CompilerThre}), the garbage collector's ({@code GC Thread#N}, {@code G1 ...}, {@code VM Thread})
 * and RocksDB's background threads ({@code rocksdb:...}); the rest is the agent's own work (event
 * loops, the round's worker, the JVM's other threads), of which three parts are counted apart too
 * ({@link Part}): the round workers ({@code round-from-...}, {@code round-to-...} during a round,
 * {@code idle-round-work...} between rounds), Vert.x's event loops ({@code vert.x-eventloo...}) and
 * the stores' sketch upkeep ({@code sketch-upkeep}). A {@link Sample} is taken before and after a
 * round; {@link Sample#minus} counts a thread absent from the first sample from zero. A thread that
 * exits between the two is not counted: the totals of a process's own accounting ({@code
 * ProcessHandle.Info}) still hold it.
 *
 * <p>The wait column is the time the process's threads were runnable but not running (summed over
 * threads): on a 2-core machine, the cost of sharing the cores with the other agent and anything
 * else. Linux only; {@link #of} is empty elsewhere.
 */
final class ThreadCpu {
  private ThreadCpu() {}

  /**
   * Nanoseconds per group, plus the summed run-queue wait; {@code roundNanos}, {@code
   * eventLoopNanos} and {@code upkeepNanos} are parts of {@code otherNanos}.
   */
  record Totals(
      long jitNanos,
      long gcNanos,
      long rocksDbNanos,
      long otherNanos,
      long waitNanos,
      long roundNanos,
      long eventLoopNanos,
      long upkeepNanos) {
    double jitSeconds() {
      return jitNanos / 1e9;
    }

    double gcSeconds() {
      return gcNanos / 1e9;
    }

    double rocksDbSeconds() {
      return rocksDbNanos / 1e9;
    }

    double otherSeconds() {
      return otherNanos / 1e9;
    }

    double waitSeconds() {
      return waitNanos / 1e9;
    }

    long roundMillis() {
      return roundNanos / 1_000_000;
    }

    long eventLoopMillis() {
      return eventLoopNanos / 1_000_000;
    }

    long upkeepMillis() {
      return upkeepNanos / 1_000_000;
    }
  }

  /**
   * What each thread group of process {@code pid} used from {@code before} to now; null when either
   * sample is missing (not Linux, or the process is gone).
   */
  static Totals since(Optional<Sample> before, long pid) {
    Optional<Sample> after = of(pid);
    return after.isPresent() && before.isPresent() ? after.get().minus(before.get()) : null;
  }

  /** The live threads of one process at one moment: thread id to (name, CPU ns, wait ns). */
  record Sample(Map<Long, Task> tasks) {
    /** What each group used from {@code before} to this sample. */
    Totals minus(Sample before) {
      long jit = 0;
      long gc = 0;
      long rocks = 0;
      long other = 0;
      long wait = 0;
      long round = 0;
      long eventLoop = 0;
      long upkeep = 0;
      for (Map.Entry<Long, Task> e : tasks.entrySet()) {
        Task now = e.getValue();
        Task then = before.tasks.get(e.getKey());
        long cpu = now.cpuNanos - (then == null ? 0 : then.cpuNanos);
        wait += now.waitNanos - (then == null ? 0 : then.waitNanos);
        switch (group(now.name)) {
          case JIT -> jit += cpu;
          case GC -> gc += cpu;
          case ROCKSDB -> rocks += cpu;
          case OTHER -> {
            other += cpu;
            switch (part(now.name)) {
              case ROUND -> round += cpu;
              case EVENT_LOOP -> eventLoop += cpu;
              case SKETCH_UPKEEP -> upkeep += cpu;
              case NONE -> {}
            }
          }
        }
      }
      return new Totals(jit, gc, rocks, other, wait, round, eventLoop, upkeep);
    }
  }

  record Task(String name, long cpuNanos, long waitNanos) {}

  enum Group {
    JIT,
    GC,
    ROCKSDB,
    OTHER
  }

  /** The parts of {@link Group#OTHER} counted apart. */
  enum Part {
    ROUND,
    EVENT_LOOP,
    SKETCH_UPKEEP,
    NONE
  }

  /**
   * The part of {@link Group#OTHER} a thread's CPU is counted in, by the name Linux holds for it.
   */
  static Part part(String name) {
    if (name.startsWith("round-") || name.startsWith("idle-round-work")) {
      return Part.ROUND;
    }
    if (name.startsWith("vert.x-eventloo")) {
      return Part.EVENT_LOOP;
    }
    if (name.startsWith("sketch-upkeep")) {
      return Part.SKETCH_UPKEEP;
    }
    return Part.NONE;
  }

  /** The group of a thread, by the name Linux holds for it. */
  static Group group(String name) {
    if (name.startsWith("C1 CompilerThre") || name.startsWith("C2 CompilerThre")) {
      return Group.JIT;
    }
    if (name.startsWith("GC Thread")
        || name.startsWith("G1 ")
        || name.equals("VM Thread")
        || name.startsWith("VM Periodic")) {
      return Group.GC;
    }
    if (name.startsWith("rocksdb:")) {
      return Group.ROCKSDB;
    }
    return Group.OTHER;
  }

  /** The live threads of process {@code pid}; empty where /proc has no scheduler statistics. */
  static Optional<Sample> of(long pid) {
    return of(Path.of("/proc", Long.toString(pid), "task"));
  }

  /**
   * The hypervisor's steal since boot, in seconds, from the first line of {@code /proc/stat} (the
   * eighth number, in USER_HZ ticks: 100 per second on Linux). Empty where there is no /proc/stat.
   */
  static OptionalDouble steal() {
    try {
      String[] f =
          Files.readAllLines(Path.of("/proc/stat"), StandardCharsets.US_ASCII)
              .get(0)
              .trim()
              .split("\\s+");
      return OptionalDouble.of(f.length > 8 ? Long.parseLong(f[8]) / 100.0 : 0);
    } catch (IOException | RuntimeException e) {
      return OptionalDouble.empty();
    }
  }

  static Optional<Sample> of(Path taskDir) {
    if (!Files.isDirectory(taskDir)) {
      return Optional.empty();
    }
    Map<Long, Task> tasks = new HashMap<>();
    try (DirectoryStream<Path> dir = Files.newDirectoryStream(taskDir)) {
      for (Path t : dir) {
        try {
          String name = Files.readString(t.resolve("comm"), StandardCharsets.UTF_8).strip();
          String[] f =
              Files.readString(t.resolve("schedstat"), StandardCharsets.UTF_8).trim().split(" ");
          if (f.length < 2) {
            return Optional.empty();
          }
          tasks.put(
              Long.parseLong(t.getFileName().toString()),
              new Task(name, Long.parseLong(f[0]), Long.parseLong(f[1])));
        } catch (NoSuchFileException gone) {
          // the thread exited while the folder was read
        }
      }
    } catch (IOException e) {
      return Optional.empty();
    }
    return Optional.of(new Sample(tasks));
  }
}
