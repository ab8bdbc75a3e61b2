package dev.reconcile.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The JVM options {@code bin/reconcile} gives an agent process, for the tools that start agent
 * processes themselves (the catch-up bench): keep the two in step ({@code AgentJvmTest} reads the
 * launcher).
 *
 * <p>{@code -XX:+UseTransparentHugePages} when the kernel offers transparent huge pages on request
 * ({@code [madvise]}; with {@code [always]} the heap gets them anyway, with {@code [never]} the JVM
 * would only warn). A catch-up allocates hundreds of megabytes of record buffers in a heap the
 * process has never touched: with 4 KiB pages the kernel's page faults were a large part of the
 * agents' CPU (docs/benchmarks.md, section 3a); 2 MiB pages fault 512 times less often.
 *
 * <p>{@code -Xmn128m}: a young generation of fixed size. G1 otherwise grows it into memory the
 * process has never touched while a catch-up allocates its record buffers, and the first touch of
 * every page is a page fault in the kernel: at 64 KiB records the kernel time of the agents' event
 * loops and round workers was as large as their Java time. With the young generation fixed, each
 * collection hands the same pages back (docs/benchmarks.md, section 3a).
 */
public final class AgentJvm {
  static final Path THP = Path.of("/sys/kernel/mm/transparent_hugepage/enabled");
  public static final String HUGE_PAGES = "-XX:+UseTransparentHugePages";
  public static final String YOUNG_GENERATION = "-Xmn128m";

  private AgentJvm() {}

  /** The options for an agent JVM on this machine. */
  public static List<String> defaultOptions() {
    return offersMadvise(THP) ? List.of(HUGE_PAGES, YOUNG_GENERATION) : List.of(YOUNG_GENERATION);
  }

  static boolean offersMadvise(Path setting) {
    try {
      return Files.readString(setting, StandardCharsets.US_ASCII).contains("[madvise]");
    } catch (IOException | RuntimeException e) {
      return false; // not Linux, or no THP support
    }
  }
}
