package dev.reconcile.agent.security;

import static dev.reconcile.agent.security.Agents.assertConverged;
import static dev.reconcile.agent.security.Agents.b;
import static dev.reconcile.agent.security.Agents.contents;
import static dev.reconcile.agent.security.Agents.load;
import static dev.reconcile.agent.security.Agents.repair;
import static dev.reconcile.agent.security.Agents.repairOnceIdle;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.reconcile.agent.HostPort;
import dev.reconcile.agent.ReplicaAgent;
import dev.reconcile.agent.RoundReport;
import dev.reconcile.agent.store.FaultInjector;
import dev.reconcile.agent.store.HybridClock;
import dev.reconcile.agent.store.NodeIds;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.wire.Envelope;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.rocksdb.RocksDBException;

/**
 * Data at stake: corrupted frames (a fault-injecting proxy), a failing store write in the middle of
 * a repair, versions from the future, and the hash seed staying secret on the wire.
 */
class RepairIntegrityTest {
  @TempDir Path dir;

  private static boolean contains(byte[] hay, byte[] needle) {
    outer:
    for (int i = 0; i + needle.length <= hay.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (hay[i + j] != needle[j]) {
          continue outer;
        }
      }
      return true;
    }
    return false;
  }

  private static int indexOf(byte[] hay, byte[] needle) {
    for (int i = 0; i + needle.length <= hay.length; i++) {
      if (java.util.Arrays.equals(hay, i, i + needle.length, needle, 0, needle.length)) {
        return i;
      }
    }
    return -1;
  }

  private static HostPort via(TcpProxy p) {
    return new HostPort("127.0.0.1", p.port());
  }

  @Test
  void theHashSeedNeverTravelsOnlyItsFingerprint() throws Exception {
    String secret = "cluster-secret-Zq8-0123456789";
    Map<String, String> m = Map.of("hash-seed", secret);
    try (Agents c = new Agents(dir)) {
      ReplicaAgent a = c.start("a", m);
      ReplicaAgent b = c.start("b", m);
      load(a, "a", 3000, 30);
      load(b, "b", 40, 30);
      try (TcpProxy p = new TcpProxy(b.peerPort(), null)) {
        RoundReport r = repair(a, via(p));
        assertThat(r.ok).as(r.error).isTrue();
        byte[] wire = p.captured();
        assertThat(wire.length).isGreaterThan(100_000);
        long seed = HashSpec.seedFromSecret(secret.getBytes(StandardCharsets.UTF_8));
        byte[] le = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(seed).array();
        byte[] be = ByteBuffer.allocate(8).putLong(seed).array();
        assertThat(contains(wire, secret.getBytes(StandardCharsets.UTF_8)))
            .as("secret text on the wire")
            .isFalse();
        assertThat(contains(wire, le)).as("seed (LE) on the wire").isFalse();
        assertThat(contains(wire, be)).as("seed (BE) on the wire").isFalse();
        // What does travel: the 32-bit fingerprint that lets peers detect a seed mismatch.
        int fp = HashSpec.xxh3(seed).seedFingerprint();
        assertThat(
                contains(
                    wire, ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(fp).array()))
            .isTrue();
      }
    }
  }

  /** A record batch, or a row batch (the new replica b holds none of a's partitions). */
  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void aRecordBatchCorruptedInTransitIsRejectedByItsChecksum(boolean rowBatches) throws Exception {
    try (Agents c = new Agents(dir)) {
      ReplicaAgent a = c.start("a", Map.of("batch-records", "50"));
      ReplicaAgent b = c.start("b", Map.of("row-batches", String.valueOf(rowBatches)));
      load(a, "k", 600, 40);
      TreeMap<String, String> truth = contents(a.store());
      AtomicBoolean flipped = new AtomicBoolean();
      TcpProxy.Rewriter flipValueByte =
          (toTarget, i, body) -> {
            if (!toTarget || flipped.get()) {
              return body;
            }
            try {
              Envelope e = Envelope.parseFrom(body);
              if (!e.hasRecordBatch() && !e.hasRowBatch()) {
                return body;
              }
              assertThat(e.hasRowBatch()).isEqualTo(rowBatches);
              ByteString v =
                  rowBatches
                      ? e.getRowBatch().getRows()
                      : e.getRecordBatch().getRecords(0).getValue();
              int at = indexOf(body, v.toByteArray());
              byte[] out = body.clone();
              out[at + v.size() / 2] ^= 0x04; // still valid protobuf, a different value
              flipped.set(true);
              return out;
            } catch (InvalidProtocolBufferException ex) {
              return body;
            }
          };
      try (TcpProxy p = new TcpProxy(b.peerPort(), flipValueByte)) {
        RoundReport r = repair(a, via(p));
        assertThat(flipped).isTrue();
        assertThat(r.ok).isFalse();
        assertThat(r.error).contains("checksum mismatch");
      }
      assertThat(Agents.refusals(b, "malformed")).isEqualTo(1);
      // Nothing corrupted was applied: every record b holds is exactly a's.
      contents(b.store()).forEach((k, v) -> assertThat(truth.get(k)).as(k).isEqualTo(v));
      assertThat(b.store().selfCheck().ok()).isTrue();
      // The next clean round completes.
      RoundReport again = repairOnceIdle(a, b);
      assertThat(again.ok).as(again.error).isTrue();
      assertConverged(a, b);
    }
  }

  /**
   * A random bit flipped in a random frame, either direction: whatever fails, nothing wrong is
   * stored.
   */
  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 4, 5, 6})
  void randomBitFlipsNeverStoreWrongData(long seed) throws Exception {
    try (Agents c = new Agents(dir)) {
      // A flip can leave one side waiting for a frame that never comes: a short idle timeout ends
      // that.
      ReplicaAgent a = c.start("a", Map.of("batch-records", "40", "idle-timeout", "2s"));
      ReplicaAgent b = c.start("b", Map.of("idle-timeout", "2s"));
      load(a, "a", 300, 20);
      load(b, "b", 200, 20);
      TreeMap<String, String> union = new TreeMap<>(contents(a.store()));
      union.putAll(contents(b.store()));
      SplittableRandom rnd = new SplittableRandom(seed);
      boolean dirUp = rnd.nextBoolean();
      int frame = rnd.nextInt(dirUp ? 12 : 8);
      long pick = rnd.nextLong();
      TcpProxy.Rewriter flip =
          (toTarget, i, body) -> {
            if (toTarget != dirUp || i != frame || body.length == 0) {
              return body;
            }
            byte[] out = body.clone();
            SplittableRandom r2 = new SplittableRandom(pick);
            out[r2.nextInt(out.length)] ^= (byte) (1 << r2.nextInt(8));
            return out;
          };
      try (TcpProxy p = new TcpProxy(b.peerPort(), flip)) {
        repair(a, via(p)); // may succeed (a harmless bit) or fail: both are fine
      }
      for (ReplicaAgent x : new ReplicaAgent[] {a, b}) {
        contents(x.store())
            .forEach(
                (k, v) ->
                    assertThat(union.get(k))
                        .as("seed %d, %s at %s", seed, k, x.config().nodeId())
                        .isEqualTo(v));
        assertThat(x.store().selfCheck().ok()).as("seed %d", seed).isTrue();
      }
      RoundReport clean = repairOnceIdle(a, b);
      assertThat(clean.ok).as("seed %d: %s", seed, clean.error).isTrue();
      assertConverged(a, b);
      assertThat(contents(a.store())).isEqualTo(union);
    }
  }

  /**
   * Fails the store's {@code failing}th write (1-based) as a full disk does, noting its record
   * count in {@code failedRecords}; {@code written} sums the records of the writes before it.
   */
  private static FaultInjector fullDiskAt(
      int failing, AtomicLong written, AtomicInteger failedRecords) {
    AtomicInteger calls = new AtomicInteger();
    return n -> {
      if (calls.incrementAndGet() == failing) {
        failedRecords.set(n);
        throw new RocksDBException("injected: While appending to file: No space left on device");
      }
      written.addAndGet(n);
    };
  }

  @Test
  void aStoreWriteFailureFailsThatBatchWholeAndTheNextRoundCompletes() throws Exception {
    try (Agents c = new Agents(dir)) {
      ReplicaAgent a = c.start("a", Map.of("batch-records", "100"));
      ReplicaAgent b = c.start("b", Map.of());
      load(a, "k", 2000, 40);
      AtomicLong written = new AtomicLong();
      AtomicInteger failedBatch = new AtomicInteger();
      b.store().faultInjector(fullDiskAt(4, written, failedBatch));
      RoundReport r = repair(a, b);
      assertThat(r.ok).isFalse();
      // b held none of a's partitions: each is loaded whole and written at its end (under 1 MiB,
      // through one write batch), so the fourth write is the fourth partition's.
      assertThat(r.error)
          .contains("could not apply batch")
          .contains("loading partition 3 failed")
          .contains("No space left on device")
          .contains("store and sketches unchanged");
      assertThat(failedBatch.get()).isPositive();
      // Exactly the writes before the failing one are stored; none of the failing one.
      assertThat(b.store().recordCount()).isEqualTo(written.get());
      assertThat(contents(b.store())).hasSize((int) written.get());
      assertThat(b.store().selfCheck().ok()).isTrue();
      b.store().faultInjector(null);
      RoundReport again = repairOnceIdle(a, b);
      assertThat(again.ok).as(again.error).isTrue();
      assertConverged(a, b);
    }
  }

  /**
   * b holds records of every partition, so a's records come as listed batches, which b applies in
   * slices of 50 keys; the second slice's write fails (a full disk). The round fails naming the
   * slices applied before; exactly the first slice is stored, with its index and sketches; the next
   * round completes.
   */
  @Test
  void aStoreWriteFailureInALaterSliceKeepsTheSlicesBeforeAndTheNextRoundCompletes()
      throws Exception {
    try (Agents c = new Agents(dir)) {
      ReplicaAgent a = c.start("a", Map.of());
      ReplicaAgent b = c.start("b", Map.of("apply-slice-keys", "50"));
      load(a, "k", 2000, 40);
      load(b, "own", 200, 40);
      AtomicLong written = new AtomicLong();
      b.store().faultInjector(fullDiskAt(2, written, new AtomicInteger()));
      RoundReport r = repair(a, b);
      assertThat(r.ok).isFalse();
      assertThat(r.error)
          .contains("could not apply batch")
          .contains("No space left on device")
          .contains("store and sketches unchanged")
          .contains("the batch's first 50 of")
          .contains("keys (in row order) were applied by the write batches");
      assertThat(written.get()).as("the first slice").isEqualTo(50);
      assertThat(b.store().recordCount()).isEqualTo(200 + 50);
      assertThat(b.store().selfCheck().ok()).isTrue();
      b.store().faultInjector(null);
      RoundReport again = repairOnceIdle(a, b);
      assertThat(again.ok).as(again.error).isTrue();
      assertConverged(a, b);
    }
  }

  /**
   * The sender's session fails (the receiver could not apply a batch) while bulk scans are open,
   * and closing them throws: the round still reports the session's failure, not the release error,
   * every scan is closed, and the next round completes.
   */
  @Test
  void aScanCloseThatThrowsAfterTheSessionFailedLeavesTheSessionsReport() throws Exception {
    try (Agents c = new Agents(dir)) {
      // Batches of 4 KiB and a window of 8 of them: far less than the 90 KB a sends, so bulk scans
      // are still open when b's failure comes back.
      ReplicaAgent a = c.start("a", Map.of("batch-records", "100", "batch-bytes", "4KiB"));
      ReplicaAgent b = c.start("b", Map.of());
      load(a, "k", 2000, 40);
      AtomicInteger calls = new AtomicInteger();
      b.store()
          .faultInjector(
              n -> {
                if (calls.incrementAndGet() == 2) {
                  throw new RocksDBException("injected: No space left on device");
                }
              });
      AtomicInteger unfinishedCloses = new AtomicInteger();
      a.store()
          .faultInjector(
              new FaultInjector() {
                @Override
                public void beforeWrite(int records) {}

                @Override
                public void afterScanClose(int partition, boolean finished)
                    throws RocksDBException {
                  if (!finished) {
                    unfinishedCloses.incrementAndGet();
                    throw new RocksDBException("injected: close of partition " + partition);
                  }
                }
              });
      RoundReport r = repair(a, b);
      assertThat(r.ok).isFalse();
      assertThat(r.error)
          .contains("could not apply batch")
          .contains("No space left on device")
          .doesNotContain("internal error")
          .doesNotContain("injected: close");
      assertThat(unfinishedCloses.get()).as("scans closed before their end").isPositive();
      a.store().faultInjector(null);
      b.store().faultInjector(null);
      RoundReport again = repairOnceIdle(a, b);
      assertThat(again.ok).as(again.error).isTrue();
      assertConverged(a, b);
    }
  }

  @Test
  void versionsTooFarInTheFutureAreRefusedAndCounted() throws Exception {
    try (Agents c = new Agents(dir)) {
      ReplicaAgent a = c.start("a", Map.of());
      ReplicaAgent b = c.start("b", Map.of("max-clock-skew", "1h"));
      load(a, "now", 100, 20);
      long future = HybridClock.version(System.currentTimeMillis() + 2 * 3600_000L, 0);
      List<ReplicaRecord> ahead = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        ahead.add(
            new ReplicaRecord(b("future" + i), b("v"), future + i, NodeIds.origin("a"), false));
      }
      a.store().putAll(ahead);
      RoundReport r = repair(a, b);
      assertThat(r.ok).as(r.error).isTrue();
      assertThat(b.store().recordCount()).isEqualTo(100);
      assertThat(b.store().get(b("future0"))).isEmpty();
      assertThat(Agents.metric(b, "reconcile_records_refused_total", "reason=\"clock_skew\""))
          .isEqualTo(5);
      assertThat(b.lastReports().values()).anyMatch(rep -> rep.clockSkewRefused == 5);
      assertThat(HybridClock.physicalMillis(b.store().clock().last()))
          .isLessThan(System.currentTimeMillis() + 3600_000L);
      assertThat(r.stillDiffering).isNotEmpty();
      // The operator sees them: count and first keys in /status (reconcile status prints them).
      String status =
          java.net.http.HttpClient.newHttpClient()
              .send(
                  java.net.http.HttpRequest.newBuilder(
                          java.net.URI.create("http://127.0.0.1:" + b.httpPort() + "/status"))
                      .build(),
                  java.net.http.HttpResponse.BodyHandlers.ofString())
              .body();
      io.vertx.core.json.JsonObject last =
          new io.vertx.core.json.JsonObject(status).getJsonObject("lastRounds");
      assertThat(last.fieldNames()).anyMatch(k -> k.startsWith("from "));
      io.vertx.core.json.JsonObject fromA =
          last.getJsonObject(
              last.fieldNames().stream()
                  .filter(k -> k.startsWith("from "))
                  .findFirst()
                  .orElseThrow());
      assertThat(fromA.getLong("clockSkewRefused")).isEqualTo(5);
      io.vertx.core.json.JsonArray keys = fromA.getJsonArray("clockSkewKeys");
      assertThat(keys.size()).isEqualTo(5);
      for (int i = 0; i < keys.size(); i++) {
        assertThat(keys.getString(i)).startsWith("future");
      }
    }
  }
}
