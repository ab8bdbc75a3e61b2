package dev.reconcile.cli.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

final class ThreadCpuTest {
  @Test
  void threadNamesFallIntoTheirGroups() {
    assertEquals(ThreadCpu.Group.JIT, ThreadCpu.group("C2 CompilerThre"));
    assertEquals(ThreadCpu.Group.JIT, ThreadCpu.group("C1 CompilerThre"));
    assertEquals(ThreadCpu.Group.GC, ThreadCpu.group("GC Thread#0"));
    assertEquals(ThreadCpu.Group.GC, ThreadCpu.group("G1 Refine#0"));
    assertEquals(ThreadCpu.Group.GC, ThreadCpu.group("VM Thread"));
    assertEquals(ThreadCpu.Group.ROCKSDB, ThreadCpu.group("rocksdb:low"));
    assertEquals(ThreadCpu.Group.OTHER, ThreadCpu.group("vert.x-eventloo"));
    assertEquals(ThreadCpu.Group.OTHER, ThreadCpu.group("java"));
  }

  @Test
  void theAgentsOwnThreadsFallIntoTheirParts() {
    assertEquals(ThreadCpu.Part.ROUND, ThreadCpu.part("round-from-127."));
    assertEquals(ThreadCpu.Part.ROUND, ThreadCpu.part("round-to-127.0."));
    assertEquals(ThreadCpu.Part.ROUND, ThreadCpu.part("idle-round-work"));
    assertEquals(ThreadCpu.Part.EVENT_LOOP, ThreadCpu.part("vert.x-eventloo"));
    assertEquals(ThreadCpu.Part.SKETCH_UPKEEP, ThreadCpu.part("sketch-upkeep"));
    assertEquals(ThreadCpu.Part.NONE, ThreadCpu.part("vert.x-acceptor"));
    assertEquals(ThreadCpu.Part.NONE, ThreadCpu.part("java"));
  }

  @Test
  void differenceCountsNewThreadsFromZeroAndSumsWaits(@TempDir Path dir) throws Exception {
    task(dir, 10, "C2 CompilerThre", 1_000, 50);
    task(dir, 11, "worker", 2_000, 70);
    ThreadCpu.Sample before = ThreadCpu.of(dir).orElseThrow();
    task(dir, 10, "C2 CompilerThre", 4_000, 150);
    task(dir, 11, "worker", 2_500, 90);
    task(dir, 12, "rocksdb:low", 700, 5);
    ThreadCpu.Sample after = ThreadCpu.of(dir).orElseThrow();
    assertEquals(3, after.tasks().size());
    ThreadCpu.Totals d = after.minus(before);
    assertEquals(new ThreadCpu.Totals(3_000, 0, 700, 500, 100 + 20 + 5, 0, 0, 0), d);
  }

  @Test
  void partsOfTheRestFollowATaskAcrossARenameAndSumToAtMostTheRest(@TempDir Path dir)
      throws Exception {
    task(dir, 20, "idle-round-work", 1_000_000, 0);
    task(dir, 21, "vert.x-eventloo", 2_000_000, 0);
    ThreadCpu.Sample before = ThreadCpu.of(dir).orElseThrow();
    // The worker took a round's name while it ran; its CPU is still the same task's.
    task(dir, 20, "round-to-127.0.", 5_000_000, 0);
    task(dir, 21, "vert.x-eventloo", 3_000_000, 0);
    task(dir, 22, "sketch-upkeep", 4_000_000, 0);
    task(dir, 23, "vert.x-acceptor", 9_000_000, 0);
    ThreadCpu.Totals d = ThreadCpu.of(dir).orElseThrow().minus(before);
    assertEquals(4_000_000 + 1_000_000 + 4_000_000 + 9_000_000, d.otherNanos());
    assertEquals(4, d.roundMillis());
    assertEquals(1, d.eventLoopMillis());
    assertEquals(4, d.upkeepMillis());
  }

  @Test
  void thisProcessHasThreadsWithCpuTime() {
    // Linux is where the bench runs; its /proc must give this JVM's threads.
    ThreadCpu.Sample s = ThreadCpu.of(ProcessHandle.current().pid()).orElseThrow();
    assertTrue(s.tasks().size() > 3, "threads " + s.tasks());
    long cpu = s.tasks().values().stream().mapToLong(ThreadCpu.Task::cpuNanos).sum();
    assertTrue(cpu > 0, "CPU of " + s.tasks());
    assertTrue(ThreadCpu.steal().orElseThrow() >= 0);
  }

  @Test
  void missingFolderGivesNothing(@TempDir Path dir) {
    assertTrue(ThreadCpu.of(dir.resolve("absent")).isEmpty());
  }

  private static void task(Path dir, long tid, String name, long cpu, long wait) throws Exception {
    Path t = Files.createDirectories(dir.resolve(Long.toString(tid)));
    Files.writeString(t.resolve("comm"), name + "\n");
    Files.writeString(t.resolve("schedstat"), cpu + " " + wait + " 3\n");
  }
}
