package dev.reconcile.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class RatelessDecoderTest {
  private static final HashSpec SPEC = HashSpec.xxh3(42);

  /**
   * Seeded trials with common elements on both sides and ranges of random sizes: every decode
   * completes within the prefix and its lists equal the true difference.
   */
  @Test
  void decodesTheSymmetricDifferenceInRandomBatches() throws Exception {
    for (long seed = 1; seed <= 300; seed++) {
      SplittableRandom r = new SplittableRandom(seed);
      int d = seed <= 100 ? (int) seed : 1 + r.nextInt(2000);
      RatelessTrial t =
          RatelessTrial.of(
              SPEC, seed, d, r.nextDouble(), r.nextInt(3000), RatelessTrial.log2For(d, 3, 8));
      RatelessDecoder dec = new RatelessDecoder(t.here);
      int batches = 0;
      while (!dec.complete()) {
        assertThat(dec.exhausted()).as("seed %d d %d", seed, d).isFalse();
        int n = Math.min(1 + r.nextInt(2 + d), dec.limit() - dec.received());
        t.send(dec, dec.received(), n);
        batches++;
      }
      assertThat(t.matches(dec)).as("seed %d d %d after %d batches", seed, d, batches).isTrue();
      assertThat(dec.recovered()).isEqualTo(d);
      assertThat(dec.failed()).isFalse();
      assertThat(dec.exhausted()).isFalse();
      // symbols after completion arrive explained by the decoded difference
      if (dec.received() < dec.limit()) {
        t.send(dec, dec.received(), dec.limit() - dec.received());
        assertThat(dec.complete()).isTrue();
        assertThat(t.matches(dec)).isTrue();
      }
    }
  }

  /** Batch boundaries do not change the outcome: the same instance decodes at the same symbol. */
  @Test
  void completesAtTheSameSymbolWhateverTheBatches() throws Exception {
    for (long seed = 1; seed <= 40; seed++) {
      RatelessTrial t = RatelessTrial.of(SPEC, seed, 50 + (int) seed * 7, 0.5, 100, 11);
      int needed = t.decodeOneByOne().received();
      RatelessDecoder whole = new RatelessDecoder(t.here);
      t.send(whole, 0, needed - 1);
      assertThat(whole.complete()).as("seed %d", seed).isFalse();
      t.send(whole, needed - 1, 1);
      assertThat(whole.complete()).as("seed %d", seed).isTrue();
      assertThat(t.matches(whole)).isTrue();
    }
  }

  @Test
  void identicalSetsCompleteOnSymbolZero() throws Exception {
    RatelessTrial t = RatelessTrial.of(SPEC, 7, 0, 0.5, 10_000, 10);
    RatelessDecoder dec = new RatelessDecoder(t.here);
    t.send(dec, 0, 1);
    assertThat(dec.complete()).isTrue();
    assertThat(dec.onlyHere()).isEmpty();
    assertThat(dec.onlyThere()).isEmpty();
  }

  /**
   * 70,000 common elements overflow the 16-bit counts on the wire; the difference still decodes.
   */
  @Test
  void countsWrapOnTheWireButDifferencesSurvive() throws Exception {
    RatelessTrial t = RatelessTrial.of(SPEC, 8, 40, 0.5, 70_000, 8);
    assertThat(t.here.count(0)).isGreaterThan(1 << 16);
    RatelessDecoder dec = new RatelessDecoder(t.here);
    t.send(dec, 0, 256);
    assertThat(dec.complete()).isTrue();
    assertThat(t.matches(dec)).isTrue();
  }

  /** Elements carry their partition bits: a group of partitions decodes as one. */
  @Test
  void aGroupOfPartitionsDecodesFromTheSumOfTheirPrefixes() throws Exception {
    TestSets s = TestSets.random(9, 20_000, 150, 120);
    int partitionsLog2 = 3;
    CodedSymbols[] mine = new CodedSymbols[1 << partitionsLog2];
    CodedSymbols[] theirs = new CodedSymbols[1 << partitionsLog2];
    for (int p = 0; p < mine.length; p++) {
      mine[p] = new CodedSymbols(SPEC, 10);
      theirs[p] = new CodedSymbols(SPEC, 10);
    }
    for (long x : s.a) {
      mine[HashSpec.partitionOfElement(x, partitionsLog2)].insert(x);
    }
    for (long x : s.b) {
      theirs[HashSpec.partitionOfElement(x, partitionsLog2)].insert(x);
    }
    // group = partitions 2..5
    CodedSymbols myGroup = mine[2].copy();
    CodedSymbols theirGroup = theirs[2].copy();
    for (int p = 3; p <= 5; p++) {
      myGroup.add(mine[p]);
      theirGroup.add(theirs[p]);
    }
    RatelessDecoder dec = new RatelessDecoder(myGroup);
    dec.receive(0, PackedSymbols.pack(theirGroup, 0, 1024));
    assertThat(dec.complete()).isTrue();
    long[] wantHere =
        java.util.Arrays.stream(s.onlyA).filter(x -> inGroup(x, partitionsLog2)).toArray();
    long[] wantThere =
        java.util.Arrays.stream(s.onlyB).filter(x -> inGroup(x, partitionsLog2)).toArray();
    assertThat(wantHere.length + wantThere.length).isGreaterThan(100);
    assertThat(RatelessTrial.sameSet(dec.onlyHere(), wantHere)).isTrue();
    assertThat(RatelessTrial.sameSet(dec.onlyThere(), wantThere)).isTrue();
  }

  private static boolean inGroup(long x, int partitionsLog2) {
    int p = HashSpec.partitionOfElement(x, partitionsLog2);
    return p >= 2 && p <= 5;
  }

  @Test
  void aPartialDecodeIsNeverExposedAndExhaustionIsReported() throws Exception {
    RatelessTrial t = RatelessTrial.of(SPEC, 10, 500, 0.5, 0, 8); // 256 symbols for d = 500
    RatelessDecoder dec = new RatelessDecoder(t.here);
    t.send(dec, 0, 100);
    assertThat(dec.complete()).isFalse();
    assertThat(dec.exhausted()).isFalse();
    assertThatThrownBy(dec::onlyHere)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("not complete")
        .hasMessageContaining("from 100 symbols");
    t.send(dec, 100, 156);
    assertThat(dec.received()).isEqualTo(256);
    assertThat(dec.exhausted()).isTrue();
    assertThat(dec.complete()).isFalse();
    assertThatThrownBy(dec::onlyThere).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> dec.receive(256, new byte[14]))
        .isInstanceOf(FormatException.class)
        .hasMessage("coded symbols [256, 257) exceed the prefix of 256 symbols");
  }

  /** A malformed range is refused before anything is read; the decode then goes on unharmed. */
  @Test
  void malformedRangesLeaveTheDecoderUnchanged() throws Exception {
    RatelessTrial t = RatelessTrial.of(SPEC, 11, 60, 0.5, 1000, 9);
    RatelessDecoder dec = new RatelessDecoder(t.here);
    t.send(dec, 0, 10);
    byte[] p = t.therePacked;
    assertThatThrownBy(() -> dec.receive(11, ByteBuffer.wrap(p, 14 * 11, 14)))
        .isInstanceOf(FormatException.class)
        .hasMessage("coded symbols from index 11, expected the next index 10");
    assertThatThrownBy(() -> dec.receive(9, ByteBuffer.wrap(p, 14 * 9, 14)))
        .hasMessage("coded symbols from index 9, expected the next index 10");
    assertThatThrownBy(() -> dec.receive(10, ByteBuffer.wrap(p, 14 * 10, 13)))
        .hasMessage("packed coded symbols of 13 bytes: not a multiple of 14 bytes per symbol");
    assertThatThrownBy(() -> dec.receive(10, new byte[0]))
        .hasMessage("empty range of coded symbols at index 10");
    assertThatThrownBy(() -> dec.receive(10, new byte[14 * 600]))
        .hasMessage("coded symbols [10, 610) exceed the prefix of 512 symbols");
    assertThat(dec.received()).isEqualTo(10);
    assertThat(dec.failed()).isFalse();
    ByteBuffer rest = ByteBuffer.wrap(p, 14 * 10, 14 * 502);
    dec.receive(10, rest);
    assertThat(rest.remaining()).isZero();
    assertThat(dec.complete()).isTrue();
    assertThat(t.matches(dec)).isTrue();
  }

  /**
   * Random bytes as the peer's symbols: the decode never reports complete (that would need a 96-bit
   * coincidence in symbol 0), never extracts more elements than symbols, and ends exhausted or
   * failed with a clear error.
   */
  @Test
  void randomSymbolsNeverComplete() throws Exception {
    long seed = 12;
    SplittableRandom r = new SplittableRandom(seed);
    CodedSymbols local = CodedSymbols.of(SPEC, 9, r.longs(300).toArray());
    int failed = 0;
    for (int trial = 0; trial < 300; trial++) {
      byte[] junk = new byte[14 * 512];
      r.nextBytes(junk);
      RatelessDecoder dec = new RatelessDecoder(local);
      try {
        int at = 0;
        while (at < 512) {
          int n = Math.min(512 - at, 1 + r.nextInt(64));
          dec.receive(at, ByteBuffer.wrap(junk, 14 * at, 14 * n));
          at += n;
          assertThat(dec.complete()).as("seed %d trial %d", seed, trial).isFalse();
        }
        assertThat(dec.exhausted()).isTrue();
      } catch (FormatException e) {
        failed++;
        assertThat(dec.failed()).isTrue();
        assertThat(e).hasMessageContaining("corrupt or hostile");
      }
      assertThat(dec.recovered()).isLessThanOrEqualTo(dec.received());
    }
    assertThat(failed).isLessThan(300);
  }

  /**
   * The hostile case of the peel: every difference symbol is made pure with its own element that
   * really maps there. The decoder extracts at most one element per symbol received, stops with a
   * failure or runs out of symbols, and never reports complete.
   */
  @Test
  void pureLookingHostileSymbolsAreBounded() throws Exception {
    long seed = 13;
    SplittableRandom r = new SplittableRandom(seed);
    int m = 128;
    CodedSymbols empty = new CodedSymbols(SPEC, 7);
    ByteBuffer b = ByteBuffer.allocate(14 * m).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < m; i++) {
      long y;
      do {
        y = r.nextLong();
      } while (!contains(SPEC.ratelessIndices(y, i + 1), i));
      b.putLong(y).putInt((int) SPEC.checkHash(y)).putShort((short) -1); // 0 - (-1) = +1
    }
    RatelessDecoder dec = new RatelessDecoder(empty);
    try {
      dec.receive(0, b.array());
      assertThat(dec.complete()).isFalse();
    } catch (FormatException e) {
      assertThat(dec.failed()).isTrue();
    }
    assertThat(dec.complete()).isFalse();
    assertThat(dec.recovered()).isGreaterThan(0).isLessThanOrEqualTo(m);
  }

  private static boolean contains(int[] a, int v) {
    for (int x : a) {
      if (x == v) {
        return true;
      }
    }
    return false;
  }

  /**
   * A peer whose symbol 0 equals ours but whose other symbols differ is inconsistent: the decoder
   * checks every received symbol when symbol 0 empties, and every later symbol after completion.
   */
  @Test
  void inconsistentSymbolsFailInsteadOfCompleting() throws Exception {
    // d = 2000 in 20 symbols: no symbol is pure, so symbol 0 stays as forged
    RatelessTrial big = RatelessTrial.of(SPEC, 14, 2000, 0.5, 500, 8);
    byte[] forged = big.therePacked.clone();
    System.arraycopy(PackedSymbols.pack(big.here, 0, 1), 0, forged, 0, 14);
    RatelessDecoder dec = new RatelessDecoder(big.here);
    assertThatThrownBy(() -> dec.receive(0, ByteBuffer.wrap(forged, 0, 14 * 20)))
        .isInstanceOf(FormatException.class)
        .hasMessageContaining("is not zero when symbol 0 emptied");
    assertThat(dec.failed()).isTrue();
    assertThat(dec.complete()).isFalse();
    assertThatThrownBy(() -> dec.receive(20, ByteBuffer.wrap(forged, 14 * 20, 14)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("already failed");

    // a forged symbol 0 alone is indistinguishable from identical sets; what follows is not
    RatelessDecoder early = new RatelessDecoder(big.here);
    early.receive(0, ByteBuffer.wrap(forged, 0, 14));
    assertThat(early.complete()).isTrue();
    assertThatThrownBy(() -> early.receive(1, ByteBuffer.wrap(forged, 14, 14 * 8)))
        .isInstanceOf(FormatException.class)
        .hasMessageContaining("is not zero after completion");

    RatelessTrial t = RatelessTrial.of(SPEC, 15, 30, 0.5, 500, 8);
    RatelessDecoder ok = t.decodeOneByOne();
    assertThat(ok.complete()).isTrue();
    int next = ok.received();
    byte[] tampered = java.util.Arrays.copyOfRange(t.therePacked, 14 * next, 14 * (next + 4));
    tampered[14 * 2 + 3] ^= 1;
    assertThatThrownBy(() -> ok.receive(next, tampered))
        .isInstanceOf(FormatException.class)
        .hasMessage(
            "difference symbol "
                + (next + 2)
                + " is not zero after completion: the peer's symbols are inconsistent");
    assertThat(ok.complete()).isFalse();
    assertThatThrownBy(ok::onlyHere).isInstanceOf(IllegalStateException.class);
  }
}
