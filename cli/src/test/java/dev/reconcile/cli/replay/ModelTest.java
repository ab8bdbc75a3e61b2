package dev.reconcile.cli.replay;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.core.HashSpec;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The replay oracle: the last-writer-wins order as docs/design.md states it, and the loss check
 * when reads go over HTTP (a tombstone reads as absent).
 */
class ModelTest {
  private static final HashSpec SPEC = HashSpec.xxh3(42);
  private static final byte[] KEY = "k".getBytes(StandardCharsets.UTF_8);
  private static final Set<String> ALL = Set.of("a", "b", "c");

  private static byte[] v(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static Observed live(long version, long origin, String value) {
    return new Observed(version, origin, v(value), false);
  }

  @Test
  void orderIsVersionThenOriginThenValueHashThenTombstoneAllUnsigned() {
    // Version first, unsigned: a version with the top bit set is the newest.
    assertThat(Model.order(1L << 63, 1, v("x"), false, 5, 9, v("x"), false, SPEC)).isPositive();
    assertThat(Model.order(4, 9, v("x"), true, 5, 1, v("x"), false, SPEC)).isNegative();
    // Equal versions: origin, unsigned.
    assertThat(Model.order(5, -1L, v("x"), false, 5, 7, v("x"), false, SPEC)).isPositive();
    // Equal version and origin: the keyed value hash, unsigned.
    long hx = SPEC.valueHash(v("x"));
    long hy = SPEC.valueHash(v("y"));
    assertThat(Model.order(5, 7, v("x"), false, 5, 7, v("y"), false, SPEC))
        .isEqualTo(Long.compareUnsigned(hx, hy));
    // Everything equal but the flag: the tombstone beats an empty value.
    assertThat(Model.order(5, 7, new byte[0], true, 5, 7, new byte[0], false, SPEC)).isPositive();
    assertThat(Model.order(5, 7, v("x"), false, 5, 7, v("x"), false, SPEC)).isZero();
  }

  @Test
  void winnerIsTheLargestWriteWhateverTheOrderOfAcknowledgement() {
    Model m = new Model();
    m.ack("a", KEY, v("old"), 10, 1);
    m.ackDelete("b", KEY, 20, 2);
    m.ack("c", KEY, v("new"), 30, 3);
    List<Model.Write> w = m.writes(Model.keyString(KEY), ALL);
    assertThat(Model.winner(w, SPEC).version()).isEqualTo(30);
    assertThat(Model.winner(List.of(w.get(2), w.get(0), w.get(1)), SPEC).version()).isEqualTo(30);
    assertThat(Model.winner(m.writes(Model.keyString(KEY), Set.of("a", "b")), SPEC).tombstone())
        .isTrue();
  }

  /**
   * A key written live on every replica and then deleted: over HTTP each replica reads it as
   * absent. Nothing was lost (the tombstone superseded the live writes), and the state equals the
   * model. The previous check counted every earlier live write as lost.
   */
  @Test
  void anAbsentReadAfterADeleteLosesNothingItSuperseded() {
    Model m = new Model();
    m.ack("a", KEY, v("v"), 10, 7);
    m.ack("b", KEY, v("v"), 10, 7);
    m.ack("c", KEY, v("v"), 10, 7);
    m.ackDelete("a", KEY, 20, 1);
    List<Model.Write> w = m.writes(Model.keyString(KEY), ALL);
    Model.Write winner = Model.winner(w, SPEC);
    assertThat(Model.matches(null, winner, SPEC)).isTrue();
    assertThat(Model.lost(null, w, SPEC)).isZero();
    // In one JVM the same replica shows its tombstone exactly: nothing lost either.
    Observed tomb = new Observed(20, 1, new byte[0], true);
    assertThat(Model.matches(tomb, winner, SPEC)).isTrue();
    assertThat(Model.lost(tomb, w, SPEC)).isZero();
  }

  @Test
  void anAbsentReadStillLosesWritesNewerThanEveryTombstone() {
    Model m = new Model();
    m.ack("a", KEY, v("v1"), 10, 7);
    m.ackDelete("b", KEY, 20, 1);
    m.ack("c", KEY, v("v3"), 30, 3);
    List<Model.Write> w = m.writes(Model.keyString(KEY), ALL);
    // The replica reads absent: v1 was superseded by the delete, v3 is lost.
    assertThat(Model.lost(null, w, SPEC)).isEqualTo(1);
    assertThat(Model.matches(null, Model.winner(w, SPEC), SPEC)).isFalse();
    // Nothing was ever deleted: an absent read loses every write.
    Model live = new Model();
    live.ack("a", KEY, v("v1"), 10, 7);
    live.ack("b", KEY, v("v2"), 11, 7);
    assertThat(Model.lost(null, live.writes(Model.keyString(KEY), ALL), SPEC)).isEqualTo(2);
  }

  @Test
  void anOlderLiveValueIsALoss() {
    Model m = new Model();
    m.ack("a", KEY, v("v1"), 10, 7);
    m.ack("b", KEY, v("v2"), 11, 7);
    List<Model.Write> w = m.writes(Model.keyString(KEY), ALL);
    assertThat(Model.lost(live(10, 7, "v1"), w, SPEC)).isEqualTo(1);
    assertThat(Model.lost(live(11, 7, "v2"), w, SPEC)).isZero();
    assertThat(Model.matches(live(11, 7, "v2"), Model.winner(w, SPEC), SPEC)).isTrue();
  }
}
