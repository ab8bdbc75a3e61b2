package dev.reconcile.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.reconcile.core.wire.Envelope;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Streams' snapshots taken by need ({@link SymbolSnapshot}): a member adds its symbols as the
 * stream reaches them; a session reads {@code O(d)} of the prefix and releases every member when
 * its streams are over, whether it succeeds or fails.
 */
class SymbolSnapshotTest {
  private static final EstimatorFactory F = ExactEstimator.factory(1.0);
  private static final HashSpec SPEC = TestSets.params(1, 0, 12, F.params()).spec();

  /** A member that adds from a frozen prefix, recording what it was asked. */
  static final class Frozen implements SymbolSnapshot.Member {
    final SymbolSnapshot snapshot;
    final CodedSymbols symbols;
    int from;
    boolean released;

    Frozen(SymbolSnapshot snapshot, CodedSymbols symbols) {
      this.snapshot = snapshot;
      this.symbols = symbols;
    }

    @Override
    public void extend(int to) {
      assertThat(released).as("extended after its release").isFalse();
      if (from < to) {
        snapshot.addRange(symbols, from, to);
        from = to;
      }
    }

    @Override
    public void release() {
      released = true;
    }
  }

  /** Memory sketches whose streams' snapshots are taken by need, with every member kept. */
  static final class ByNeed extends DelegatingSketches {
    final List<Frozen> members = new ArrayList<>();

    ByNeed(MemorySketches inner) {
      super(inner);
    }

    @Override
    public Fingerprint addSymbols(int partition, SymbolSnapshot snapshot) {
      Frozen m = new Frozen(snapshot, inner.symbols(partition));
      members.add(m);
      snapshot.owe(m);
      return inner.fingerprint(partition);
    }

    /** The symbols all members were asked to add, over the prefix size of one. */
    double prefixesRead() {
      long read = 0;
      for (Frozen m : members) {
        read += m.from;
      }
      return (double) read / (1 << inner.params().ratelessLog2());
    }
  }

  private static CodedSymbols prefix(long seed, int n) {
    java.util.SplittableRandom r = new java.util.SplittableRandom(seed);
    CodedSymbols s = new CodedSymbols(SPEC, 8);
    for (int i = 0; i < n; i++) {
      s.insert(r.nextLong());
    }
    return s;
  }

  @Test
  void membersAddTheirSymbolsAsTheyAreReachedAndTheSumIsTheirs() {
    CodedSymbols a = prefix(1, 300);
    CodedSymbols b = prefix(2, 500);
    SymbolSnapshot s = new SymbolSnapshot(SPEC, 8);
    Frozen ma = new Frozen(s, a);
    Frozen mb = new Frozen(s, b);
    s.owe(ma);
    s.owe(mb);
    assertThat(s.ready()).isZero();
    s.ensure(10);
    assertThat(ma.from).isEqualTo(10);
    assertThat(mb.from).isEqualTo(10);
    s.ensure(5); // already ready: nothing asked
    assertThat(ma.from).isEqualTo(10);
    s.ensure(1 << 20); // clamped to M
    assertThat(s.ready()).isEqualTo(256);
    CodedSymbols sum = a.copy();
    sum.add(b);
    assertThat(s.copy().sameSymbols(sum)).isTrue();
    assertThat(SymbolSnapshot.of(sum).copy().sameSymbols(sum)).isTrue();
  }

  @Test
  void aMemberJoinsBeforeAnySymbolIsReadAndNothingIsReadAfterTheRelease() {
    SymbolSnapshot s = new SymbolSnapshot(SPEC, 8);
    Frozen m = new Frozen(s, prefix(3, 10));
    s.owe(m);
    s.ensure(1);
    assertThatThrownBy(() -> s.owe(new Frozen(s, prefix(4, 10))))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("before any symbol is read");
    s.release();
    s.release(); // idempotent
    assertThat(m.released).isTrue();
    assertThatThrownBy(() -> s.ensure(2))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("released");
  }

  @Test
  void aMemberThatFailsToReleaseDoesNotKeepTheOthersOwing() {
    SymbolSnapshot s = new SymbolSnapshot(SPEC, 8);
    Frozen after = new Frozen(s, prefix(5, 10));
    s.owe(
        new SymbolSnapshot.Member() {
          @Override
          public void extend(int to) {}

          @Override
          public void release() {
            throw new IllegalStateException("store closed");
          }
        });
    s.owe(after);
    assertThatThrownBy(s::release).hasMessage("store closed");
    assertThat(after.released).isTrue();
  }

  private static ReconcileSession[] round(
      long seed, ByNeed a, ByNeed b, UnaryOperator<Envelope> toI) {
    ReconcileSession i = ReconcileSession.initiator(SessionConfig.of("c", "a", seed), a);
    ReconcileSession r = ReconcileSession.responder(SessionConfig.of("c", "b", 0), b);
    LocalRound.run(i, r, UnaryOperator.identity(), toI);
    return new ReconcileSession[] {i, r};
  }

  /**
   * Exact decodes from snapshots taken by need, with every member released at the end: one group,
   * partitions streaming alone, and a group that splits (d = 3 000, whose partitions' new streams
   * take new snapshots). While d is small against the prefix, the round reads a small part of it.
   */
  @ParameterizedTest
  @CsvSource({"1, 1, 0", "2, 20, 20", "3, 300, 200", "4, 1500, 1500"})
  void aRoundReadsWhatItStreamsAndReleasesEverySnapshot(long seed, int da, int db) {
    int pLog2 = 4;
    SketchParams params = RatelessSessionTest.params(seed, pLog2, 12);
    TestSets sets = TestSets.random(seed, 20_000, da, db);
    ByNeed a =
        new ByNeed(MemorySketches.of(params, F, TestSets.partitionsOf(sets.a, pLog2), sets.a));
    ByNeed b =
        new ByNeed(MemorySketches.of(params, F, TestSets.partitionsOf(sets.b, pLog2), sets.b));
    ReconcileSession[] s = round(seed, a, b, UnaryOperator.identity());
    String ctx = "seed " + seed + ", d = " + (da + db);
    RatelessSessionTest.assertExact(new RatelessSessionTest.Run(s[0], s[1], sets), ctx);
    assertThat(a.members).as(ctx).isNotEmpty();
    assertThat(b.members).as(ctx).isNotEmpty();
    for (Frozen m : a.members) {
      assertThat(m.released).as(ctx + ": initiator's member").isTrue();
    }
    for (Frozen m : b.members) {
      assertThat(m.released).as(ctx + ": responder's member").isTrue();
    }
    if (da + db <= 40) {
      // 16 partitions' prefixes of 4 096 symbols: a copy at once would read 16 prefixes a side;
      // by need each member reads what its stream sent (about 1.35 d + 2 sqrt d of a group).
      assertThat(a.prefixesRead()).as(ctx).isLessThan(1.0);
      assertThat(b.prefixesRead()).as(ctx).isLessThan(1.0);
    }
  }

  /** A session that fails mid-stream releases its snapshots on both sides. */
  @Test
  void aFailedRoundReleasesEverySnapshot() {
    long seed = 6;
    int pLog2 = 4;
    SketchParams params = RatelessSessionTest.params(seed, pLog2, 12);
    TestSets sets = TestSets.random(seed, 5_000, 30, 30);
    ByNeed a =
        new ByNeed(MemorySketches.of(params, F, TestSets.partitionsOf(sets.a, pLog2), sets.a));
    ByNeed b =
        new ByNeed(MemorySketches.of(params, F, TestSets.partitionsOf(sets.b, pLog2), sets.b));
    // The responder's first symbols arrive cut short: the initiator refuses them as malformed.
    UnaryOperator<Envelope> cut =
        e ->
            e.hasSymbols()
                ? e.toBuilder()
                    .setSymbols(
                        e.getSymbols().toBuilder()
                            .setSymbols(e.getSymbols().getSymbols().substring(1)))
                    .build()
                : e;
    ReconcileSession[] s = round(seed, a, b, cut);
    assertThat(s[0].failure()).isPresent();
    assertThat(s[1].failure()).isPresent();
    assertThat(a.members).isNotEmpty();
    assertThat(b.members).isNotEmpty();
    assertThat(a.members).allSatisfy(m -> assertThat(m.released).isTrue());
    assertThat(b.members).allSatisfy(m -> assertThat(m.released).isTrue());
  }
}
