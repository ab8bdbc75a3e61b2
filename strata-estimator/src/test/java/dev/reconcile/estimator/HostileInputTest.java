package dev.reconcile.estimator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.reconcile.core.FormatException;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.wire.CellLayoutProto;
import dev.reconcile.core.wire.Estimator;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Remote estimators built to hurt: each must give a {@link FormatException} with a clear message
 * (never another exception, never an allocation sized by the remote's claims).
 */
class HostileInputTest {
  private static final HashSpec SPEC = HashSpec.xxh3(99);
  private static final StrataEstimatorFactory F = StrataEstimatorFactory.defaults();
  private static final int CELL_BYTES = 18 * 128 * 7;

  private static StrataEstimator local() {
    StrataEstimator e = F.create(SPEC);
    SplittableRandom r = new SplittableRandom(5);
    for (int i = 0; i < 5000; i++) {
      e.add(r.nextLong());
    }
    return e;
  }

  private static Estimator valid() {
    StrataEstimator e = F.create(SPEC);
    SplittableRandom r = new SplittableRandom(6);
    for (int i = 0; i < 5000; i++) {
      e.add(r.nextLong());
    }
    return e.toProto();
  }

  private static void refused(Estimator remote, String... fragments) {
    var t = assertThatThrownBy(() -> local().estimate(remote)).isInstanceOf(FormatException.class);
    for (String f : fragments) {
      t.hasMessageContaining(f);
    }
  }

  @Test
  void validRemoteIsAccepted() throws FormatException {
    assertThat(local().estimate(valid()).value()).isPositive();
  }

  @Test
  void wrongFormatVersion() {
    refused(
        valid().toBuilder().setFormatVersion(2).build(),
        "estimator format version 2, this peer reads 1");
    refused(
        valid().toBuilder().setFormatVersion(0).build(),
        "estimator format version 0, this peer reads 1");
    refused(valid().toBuilder().setFormatVersion(-1).build(), "format version 4294967295");
  }

  @Test
  void wrongKind() {
    Estimator e = valid();
    refused(
        e.toBuilder().setParams(e.getParams().toBuilder().setKind(99)).build(),
        "estimator kind 99, this peer reads kind 1");
    refused(e.toBuilder().clearParams().build(), "estimator kind 0, this peer reads kind 1");
  }

  @Test
  void wrongHashId() {
    refused(
        valid().toBuilder().setHashId(2).build(), "estimator hash id 2, this peer uses hash id 1");
  }

  @Test
  void wrongSeedFingerprint() {
    Estimator other = F.create(HashSpec.xxh3(100)).toProto();
    refused(
        other,
        "estimator seed fingerprint " + HashSpec.hex(HashSpec.xxh3(100).seedFingerprint()),
        "this peer has " + HashSpec.hex(SPEC.seedFingerprint()),
        "possible corruption or another seed");
  }

  @Test
  void mismatchedParamsClaimsAllocateNothing() {
    Estimator e = valid();
    // strata = 2^30 with matching cell bytes claimed would need 2^30 * 128 * 7 bytes: refused on
    // the
    // claim itself, before any allocation (the local parameters define the shape).
    refused(
        e.toBuilder().setParams(e.getParams().toBuilder().setStrata(1 << 30)).build(),
        "estimator parameters mismatch: peer {strata=1073741824, cells_per_stratum=128, hash_count=4}",
        "local {strata=18, cells_per_stratum=128, hash_count=4}");
    refused(
        e.toBuilder().setParams(e.getParams().toBuilder().setCellsPerStratum(-1)).build(),
        "cells_per_stratum=4294967295");
    refused(
        e.toBuilder().setParams(e.getParams().toBuilder().setCellsPerStratum(80)).build(),
        "peer {strata=18, cells_per_stratum=80");
    refused(
        e.toBuilder().setParams(e.getParams().toBuilder().setHashCount(3)).build(),
        "hash_count=3}, local {strata=18, cells_per_stratum=128, hash_count=4}");
    refused(
        e.toBuilder().setParams(e.getParams().toBuilder().setStrata(16)).build(),
        "peer {strata=16");
  }

  @Test
  void wrongLayout() {
    Estimator e = valid();
    refused(
        e.toBuilder()
            .setLayout(
                CellLayoutProto.newBuilder().setCountBytes(2).setKeyBytes(8).setCheckBytes(4))
            .build(),
        "estimator cell layout {count_bytes=2, key_bytes=8, check_bytes=4}",
        "this peer reads {count_bytes=1, key_bytes=4, check_bytes=2}");
    refused(e.toBuilder().clearLayout().build(), "estimator cell layout {count_bytes=0");
  }

  @Test
  void truncatedAndExtraCells() {
    Estimator e = valid();
    ByteString cells = e.getCells();
    refused(
        e.toBuilder().setCells(cells.substring(0, CELL_BYTES - 1)).build(),
        "expected " + CELL_BYTES + " bytes",
        "got " + (CELL_BYTES - 1));
    refused(
        e.toBuilder().setCells(ByteString.EMPTY).build(),
        "expected " + CELL_BYTES + " bytes",
        "got 0");
    refused(
        e.toBuilder().setCells(cells.concat(ByteString.copyFrom(new byte[] {1}))).build(),
        "got " + (CELL_BYTES + 1));
    refused(e.toBuilder().setCells(cells.concat(cells)).build(), "got " + (2 * CELL_BYTES));
  }

  @Test
  void truncatedFrameDoesNotParseOrIsRefused() {
    byte[] whole = valid().toByteArray();
    for (int cut : new int[] {1, 7, 20, whole.length / 2, whole.length - 1}) {
      Estimator parsed;
      try {
        parsed = Estimator.parseFrom(java.util.Arrays.copyOf(whole, cut));
      } catch (InvalidProtocolBufferException ex) {
        continue; // the transport refuses it as malformed before the estimator sees it
      }
      Estimator p = parsed;
      assertThatThrownBy(() -> local().estimate(p))
          .as("cut at %d", cut)
          .isInstanceOf(FormatException.class);
    }
  }

  @Test
  void validationOrderIsFixed() {
    // Everything wrong at once: the format version is reported first.
    Estimator bad =
        valid().toBuilder()
            .setFormatVersion(7)
            .setHashId(9)
            .setSeedFingerprint(1)
            .setParams(valid().getParams().toBuilder().setKind(3).setStrata(1 << 30))
            .clearLayout()
            .setCells(ByteString.EMPTY)
            .build();
    refused(bad, "format version 7");
    refused(bad.toBuilder().setFormatVersion(1).build(), "kind 3");
    Estimator noKind =
        bad.toBuilder()
            .setFormatVersion(1)
            .setParams(bad.getParams().toBuilder().setKind(1))
            .build();
    refused(noKind, "hash id 9");
    refused(noKind.toBuilder().setHashId(1).build(), "seed fingerprint 0x00000001");
    Estimator p =
        noKind.toBuilder().setHashId(1).setSeedFingerprint(SPEC.seedFingerprint()).build();
    refused(p, "parameters mismatch");
    Estimator l = p.toBuilder().setParams(F.params()).build();
    refused(l, "cell layout");
    refused(
        l.toBuilder().setLayout(valid().getLayout()).build(),
        "expected " + CELL_BYTES + " bytes, got 0");
  }

  @Test
  void randomBytesAsAnEstimatorProto() {
    SplittableRandom r = new SplittableRandom(2024);
    StrataEstimator local = local();
    int parsed = 0;
    for (int trial = 0; trial < 2000; trial++) {
      byte[] b = new byte[r.nextInt(0, trial % 2 == 0 ? 12 : 200)];
      r.nextBytes(b);
      Estimator e;
      try {
        e = Estimator.parseFrom(b);
      } catch (InvalidProtocolBufferException ex) {
        continue;
      }
      parsed++;
      int t = trial;
      assertThatThrownBy(() -> local.estimate(e))
          .as("trial %d (seed 2024)", t)
          .isInstanceOf(FormatException.class)
          .hasMessageStartingWith("estimator ");
    }
    assertThat(parsed).as("some random byte strings parse as protos").isGreaterThan(100);
  }

  @Test
  void randomCellsWithAValidHeaderGiveSomeEstimateNotACrash() throws FormatException {
    SplittableRandom r = new SplittableRandom(77);
    StrataEstimator local = local();
    for (int trial = 0; trial < 200; trial++) {
      byte[] cells = new byte[CELL_BYTES];
      r.nextBytes(cells);
      if (trial % 2 == 0) {
        // mostly-empty cells with a few random ones: peeling garbage must stay bounded
        java.util.Arrays.fill(cells, 0, CELL_BYTES - 7 * r.nextInt(1, 200), (byte) 0);
      }
      long est =
          local.estimate(valid().toBuilder().setCells(ByteString.copyFrom(cells)).build()).value();
      assertThat(est).as("trial %d (seed 77)", trial).isBetween(0L, StrataEstimator.MAX_ESTIMATE);
    }
  }
}
