package dev.reconcile.cli.replay;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * A parsed divergence scenario (format: docs/replay.md). Immutable; built only by {@link
 * ScenarioParser}, which has validated every field.
 *
 * @param replicas replica names in declaration order, each with its config overrides (agent keys)
 * @param config agent config keys applied to every replica (before the per-replica overrides)
 */
public record Scenario(
    Path file,
    String name,
    String description,
    Map<String, Map<String, String>> replicas,
    Map<String, String> config,
    Initial initial,
    Background background,
    List<Event> timeline,
    Expect expect) {

  /** Size distribution: uniform in [min, max] (min == max: fixed). */
  public record Size(int min, int max) {}

  /**
   * Initial data. {@code generate} (loaded identically into {@code holders}), {@code files} (one
   * TSV per replica) and {@code fromDirs} (RocksDB directories copied per replica) may be combined.
   */
  public record Initial(
      Generate generate,
      List<String> holders,
      Map<String, Path> files,
      Map<String, Path> fromDirs) {}

  /** Generated keys {@code 0..n-1} of the key space; sizes in bytes. */
  public record Generate(int n, Size keySize, Size valueSize, long seed) {}

  /** Background rounds: every replica repairs with its neighbours in {@code via} every interval. */
  public record Background(Duration interval, String via) {}

  /** Expectations checked after the timeline. */
  public record Expect(
      int rounds,
      Duration seconds,
      String via,
      List<List<String>> groups,
      boolean model,
      boolean noLoss,
      boolean noResurrection,
      int minDoublings,
      int minFallbacks) {}

  /**
   * The key set of a write or delete: explicit keys, a range of key indices (all or {@code count}
   * of them), or new keys.
   */
  public record Keys(List<String> explicit, long from, long to, int count) {
    public boolean fresh() {
      return explicit == null && from < 0;
    }
  }

  /** One timeline step. {@code index} is its position (for messages). */
  public sealed interface Event {
    int index();
  }

  public record Write(
      int index, List<String> on, Keys keys, Size valueSize, boolean delete, boolean async)
      implements Event {}

  public record Repair(int index, String from, String to, boolean async, String expect)
      implements Event {}

  /**
   * Link fault between two replicas (both directions): partition, heal, blackhole, delay, reset.
   */
  public record LinkFault(int index, String kind, String a, String b, long amount)
      implements Event {}

  /** crash, restart, pause, resume of one replica. */
  public record Lifecycle(int index, String kind, String replica) implements Event {}

  public record Sleep(int index, Duration duration) implements Event {}

  /**
   * Waits until the link {@code a}-{@code b} has carried {@code bytes} bytes (both directions)
   * since the last repair between them started.
   */
  public record WaitBytes(int index, String a, String b, long bytes, Duration timeout)
      implements Event {}

  /** Waits for every async step started before it. */
  public record Await(int index) implements Event {}
}
