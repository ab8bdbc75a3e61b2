package dev.reconcile.example;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.ReconcileSession;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.RoundProgress;
import dev.reconcile.core.SessionConfig;
import dev.reconcile.core.SketchParams;
import dev.reconcile.core.Wire;
import dev.reconcile.core.wire.Envelope;
import dev.reconcile.estimator.StrataEstimatorFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The example of docs/embedding.md: two stores that are not ours, repaired through the API. */
class EmbeddingExampleTest {
  @Test
  void twoEmbeddedStoresAreRepairedThroughThePublicApi() throws Exception {
    // 1. Both sides agree on the sketch parameters (a handshake refuses any mismatch).
    EstimatorFactory estimators = StrataEstimatorFactory.defaults();
    long seed = HashSpec.seedFromSecret("a cluster secret".getBytes(StandardCharsets.UTF_8));
    SketchParams params = new SketchParams(HashSpec.xxh3(seed), 4, 3, 12, estimators.params());
    EmbeddedStore left = new EmbeddedStore(params, estimators);
    EmbeddedStore right = new EmbeddedStore(params, estimators);

    // 2. The stores drift apart: common records, some only on one side, one conflicting key.
    for (int i = 0; i < 10_000; i++) {
      ReplicaRecord r = ReplicaRecord.of(bytes("k" + i), bytes("v" + i), version(1000), 1);
      left.put(r);
      right.put(r);
    }
    for (int i = 0; i < 40; i++) {
      left.put(ReplicaRecord.of(bytes("left" + i), bytes("x"), version(2000), 1));
      right.put(ReplicaRecord.of(bytes("right" + i), bytes("y"), version(2000), 2));
    }
    left.put(ReplicaRecord.of(bytes("k7"), bytes("older"), version(3000), 1));
    right.put(ReplicaRecord.of(bytes("k7"), bytes("newer"), version(4000), 2));

    // 3. One round: an initiator on the left, a responder on the right. Frames are plain bytes
    //    (Wire.frame: a 4-byte length, then the message); any transport that carries them in
    //    order will do. Here they go through a byte array and back.
    ReconcileSession initiator =
        ReconcileSession.initiator(
            SessionConfig.of("example", "left", 42), left.sketches(), left, RoundProgress.NONE);
    ReconcileSession responder =
        ReconcileSession.responder(
            SessionConfig.of("example", "right", 0), right.sketches(), right);
    initiator.start();
    boolean moved = true;
    while (moved) {
      moved = false;
      Envelope e;
      while ((e = initiator.poll()) != null) {
        responder.receive(overTheWire(e));
        moved = true;
      }
      while ((e = responder.poll()) != null) {
        initiator.receive(overTheWire(e));
        moved = true;
      }
    }

    // 4. Both sides hold the same records, and the newer write of k7 won.
    assertThat(initiator.succeeded()).as("%s", initiator.failure()).isTrue();
    assertThat(responder.succeeded()).isTrue();
    assertThat(left.contents()).isEqualTo(right.contents());
    assertThat(left.get(bytes("k7")).value()).isEqualTo(bytes("newer"));
    assertThat(initiator.repairStats().recordsSent()).isEqualTo(41);
    assertThat(initiator.repairStats().recordsReceived()).isEqualTo(41);
    assertThat(initiator.repairStats().stillDiffering()).isEmpty();
  }

  private static Envelope overTheWire(Envelope e) throws Exception {
    byte[] frame = Wire.frame(e);
    int length = ByteBuffer.wrap(frame).getInt();
    return Envelope.parseFrom(Arrays.copyOfRange(frame, 4, 4 + length));
  }

  private static long version(long millis) {
    return ReplicaRecord.version(millis, 0);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
