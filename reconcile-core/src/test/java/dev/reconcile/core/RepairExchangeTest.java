package dev.reconcile.core;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import dev.reconcile.core.wire.Envelope;
import dev.reconcile.core.wire.RecordBatch;
import dev.reconcile.core.wire.Refusal.Code;
import dev.reconcile.core.wire.RepairEnd;
import dev.reconcile.core.wire.RowBatch;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Whole rounds between two in-memory replicas: repair stream, checks, progress and verify. */
class RepairExchangeTest {
  private static final long NOW = 1_750_000_000_000L;
  private static final EstimatorFactory ESTIMATORS = ExactEstimator.factory(1.0);
  private static final SketchParams PARAMS = TestSets.params(11, 2, 10, ESTIMATORS.params());

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static long v(long millis) {
    return ReplicaRecord.version(millis, 0);
  }

  private static SessionConfig config(RepairConfig repair) {
    return SessionConfig.of("c", "left", 7).withRepair(repair);
  }

  private static RepairConfig repairConfig(int window, int batchRecords) {
    return new RepairConfig(window, batchRecords, 1 << 20, batchRecords * 4, 3_600_000L, () -> NOW);
  }

  /** Two replicas sharing {@code common} records, each with its own, and conflicting versions. */
  private static MemoryReplica[] divergent(long seed, int common, int onlyLeft, int onlyRight) {
    MemoryReplica l = new MemoryReplica(PARAMS, ESTIMATORS);
    MemoryReplica r = new MemoryReplica(PARAMS, ESTIMATORS);
    SplittableRandom rnd = new SplittableRandom(seed);
    for (int i = 0; i < common; i++) {
      ReplicaRecord x = ReplicaRecord.of(b("c" + i), b("v" + rnd.nextInt()), v(NOW - 1000), 1);
      l.write(x);
      r.write(x);
    }
    for (int i = 0; i < onlyLeft; i++) {
      l.write(ReplicaRecord.of(b("l" + i), b("left" + i), v(NOW - 500), 1));
    }
    for (int i = 0; i < onlyRight; i++) {
      r.write(ReplicaRecord.of(b("r" + i), b("right" + i), v(NOW - 500), 2));
    }
    // Conflicts: the newer write wins on both sides, whichever side holds it.
    for (int i = 0; i < 20; i++) {
      boolean leftNewer = i % 2 == 0;
      l.write(ReplicaRecord.of(b("c" + i), b("L" + i), v(NOW - (leftNewer ? 10 : 20)), 1));
      r.write(ReplicaRecord.of(b("c" + i), b("R" + i), v(NOW - (leftNewer ? 20 : 10)), 2));
    }
    return new MemoryReplica[] {l, r};
  }

  private static List<ReplicaRecord> contents(MemoryReplica m) {
    List<ReplicaRecord> out = new ArrayList<>();
    m.forEach(out::add);
    out.sort((x, y) -> java.util.Arrays.compare(x.key(), y.key()));
    return out;
  }

  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3})
  void aRoundRepairsBothWaysAndTheNewerWriteWins(long seed) {
    MemoryReplica[] m = divergent(seed, 3000, 700, 450);
    ReconcileSession i =
        ReconcileSession.initiator(config(repairConfig(4, 64)), m[0].sketches(), m[0], null);
    ReconcileSession r =
        ReconcileSession.responder(
            SessionConfig.of("c", "right", 0).withRepair(repairConfig(4, 64)),
            m[1].sketches(),
            m[1]);
    LocalRound.run(i, r);
    assertThat(i.succeeded()).isTrue();
    assertThat(r.succeeded()).isTrue();
    assertThat(contents(m[0])).as("seed %d", seed).isEqualTo(contents(m[1]));
    for (int k = 0; k < 20; k++) {
      String want = (k % 2 == 0 ? "L" : "R") + k;
      assertThat(new String(m[0].get(b("c" + k)).orElseThrow().value(), StandardCharsets.UTF_8))
          .isEqualTo(want);
    }
    RepairStats rs = i.repairStats();
    assertThat(i.stats().unverified()).as(i.outcomes().toString()).isZero();
    assertThat(OutcomeSummary.of(i.outcomes()).missingRemote()).isEqualTo(700 + 20);
    // Each side sends its version of the 20 conflicting keys unless the peer's newer one replaced
    // it first (both directions stream at once); whatever the interleaving, the winners apply.
    assertThat(rs.recordsSent()).isBetween(700L, 720L);
    // Each listed element is sent or found replaced when the stream read it.
    assertThat(rs.recordsSent() + rs.listedNotFound()).isEqualTo(720);
    assertThat(rs.applied()).isEqualTo(450 + 10);
    assertThat(rs.recordsReceived()).isEqualTo(rs.applied() + rs.stale() + rs.duplicate());
    assertThat(r.repairStats().applied()).isEqualTo(700 + 10);
    assertThat(rs.verified()).isTrue();
    assertThat(rs.stillDiffering()).isEmpty();
    assertThat(i.stats().recordBytes()).isPositive();
    assertThat(i.stats().protocolBytes()).isLessThan(i.stats().bytesTotal());
  }

  /**
   * A peer's request is checked by the stream that reads it: the side asked looks nothing up first
   * (no {@code containsAll} on its sketches), sends the records it holds, and counts the requested
   * elements it has no record of ({@link RepairStats#listedNotFound}): the bogus ones, and of the
   * 20 conflicting keys those the peer's newer version replaced before the stream read them.
   */
  @ParameterizedTest
  @ValueSource(longs = {5, 6})
  void aRequestIsCheckedByTheStreamThatReadsIt(long seed) {
    MemoryReplica[] m = divergent(seed, 3000, 700, 450);
    List<String> lookups = new ArrayList<>();
    PartitionSketches real = m[0].sketches();
    PartitionSketches counted =
        (PartitionSketches)
            Proxy.newProxyInstance(
                PartitionSketches.class.getClassLoader(),
                new Class<?>[] {PartitionSketches.class},
                (proxy, method, args) -> {
                  if (method.getName().equals("containsAll")) {
                    lookups.add("partition " + args[0]);
                  }
                  try {
                    return method.invoke(real, args);
                  } catch (InvocationTargetException e) {
                    throw e.getCause();
                  }
                });
    ReconcileSession i =
        ReconcileSession.initiator(config(repairConfig(4, 64)), counted, m[0], null);
    ReconcileSession r =
        ReconcileSession.responder(
            SessionConfig.of("c", "right", 0).withRepair(repairConfig(4, 64)),
            m[1].sketches(),
            m[1]);
    SplittableRandom rnd = new SplittableRandom(seed);
    AtomicInteger requests = new AtomicInteger();
    AtomicInteger bogus = new AtomicInteger();
    LocalRound.run(
        i,
        r,
        UnaryOperator.identity(),
        e -> {
          if (!e.hasRecordRequest()) {
            return e;
          }
          requests.incrementAndGet();
          // Elements the initiator holds no record of, added to the responder's request.
          long[] asked = Wire.unpackLongsUnchecked(e.getRecordRequest().getElements());
          long[] more = Arrays.copyOf(asked, asked.length + 3);
          for (int k = asked.length; k < more.length; k++) {
            more[k] = rnd.nextLong();
          }
          bogus.addAndGet(3);
          return e.toBuilder()
              .setRecordRequest(
                  e.getRecordRequest().toBuilder()
                      .setElements(Wire.packLongs(more, 0, more.length)))
              .build();
        });
    assertThat(i.succeeded()).as(i.failure().toString()).isTrue();
    assertThat(r.succeeded()).isTrue();
    assertThat(requests.get()).as("the responder decoded and asked").isPositive();
    assertThat(contents(m[0])).as("seed %d", seed).isEqualTo(contents(m[1]));
    assertThat(lookups).as("seed %d", seed).isEmpty();
    assertThat(i.stats().unverified()).as("seed %d", seed).isZero();
    assertThat(i.repairStats().listedNotFound())
        .as("seed %d", seed)
        .isBetween((long) bogus.get(), bogus.get() + 20L);
    assertThat(i.repairStats().recordsSent() + i.repairStats().listedNotFound())
        .isEqualTo(720L + bogus.get());
    assertThat(i.repairStats().recordsSent()).isBetween(700L, 720L);
    assertThat(r.repairStats().applied()).isEqualTo(700 + 10);
  }

  @Test
  void neverMoreBatchesInFlightThanTheWindow() {
    MemoryReplica[] m = divergent(4, 100, 2000, 0);
    int window = 3;
    AtomicInteger inflight = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    ReconcileSession i =
        ReconcileSession.initiator(config(repairConfig(window, 10)), m[0].sketches(), m[0], null);
    ReconcileSession r =
        ReconcileSession.responder(
            SessionConfig.of("c", "right", 0).withRepair(repairConfig(window, 10)),
            m[1].sketches(),
            m[1]);
    LocalRound.run(
        i,
        r,
        e -> {
          if (isBatch(e)) {
            most.accumulateAndGet(inflight.incrementAndGet(), Math::max);
          }
          return e;
        },
        e -> {
          if (e.hasRecordAck()) {
            inflight.decrementAndGet();
          }
          return e;
        });
    assertThat(i.succeeded()).isTrue();
    // 2,020 records in batches of at most 10, per partition.
    assertThat(i.repairStats().batchesSent()).isBetween(202L, 206L);
    assertThat(most.get()).isEqualTo(window);
  }

  /**
   * The records of each batch sent from left to right in a repair round between {@code left} and an
   * empty (bulk) or a partly filled (listed) right side.
   */
  private static List<Integer> batchSizes(
      MemoryReplica left, MemoryReplica right, RepairConfig repair) {
    List<Integer> sizes = new ArrayList<>();
    ReconcileSession i = ReconcileSession.initiator(config(repair), left.sketches(), left, null);
    ReconcileSession r =
        ReconcileSession.responder(
            SessionConfig.of("c", "right", 0).withRepair(repair), right.sketches(), right);
    LocalRound.run(
        i,
        r,
        e -> {
          if (e.hasRecordBatch()) {
            sizes.add(e.getRecordBatch().getRecordsCount());
          }
          if (e.hasRowBatch()) {
            sizes.add(e.getRowBatch().getCount());
          }
          return e;
        },
        UnaryOperator.identity());
    assertThat(i.succeeded()).isTrue();
    assertThat(contents(left)).isEqualTo(contents(right));
    return sizes;
  }

  private static MemoryReplica filled(int n, int valueBytes) {
    MemoryReplica m = new MemoryReplica(PARAMS, ESTIMATORS);
    for (int k = 0; k < n; k++) {
      m.write(ReplicaRecord.of(b("k" + k), new byte[valueBytes], v(NOW - 100), 1));
    }
    return m;
  }

  /** A record batch or a row batch. */
  private static boolean isBatch(Envelope e) {
    return e.hasRecordBatch() || e.hasRowBatch();
  }

  private static int batchPartition(Envelope e) {
    return e.hasRowBatch() ? e.getRowBatch().getPartition() : e.getRecordBatch().getPartition();
  }

  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void aBulkPartitionIsSentInBulkBatchesBoundedByRecordsAndBytes(boolean rowBatches) {
    // Batches of at most 10 records, 40 of a bulk partition; each record counts 4 + 100 + 32 bytes
    // in a record batch, 1 + 4 + 1 + 130 as a row.
    RepairConfig repair =
        new RepairConfig(3, 10, 1 << 20, 40, 160, 3_600_000L, () -> NOW).withRowBatches(rowBatches);
    MemoryReplica source = filled(2000, 100);
    List<Integer> bulk = batchSizes(source, new MemoryReplica(PARAMS, ESTIMATORS), repair);
    assertThat(bulk).allSatisfy(n -> assertThat(n).isBetween(1, 40));
    assertThat(bulk.stream().mapToInt(Integer::intValue).sum()).isEqualTo(2000);
    // 4 partitions: each but its last batch is full.
    assertThat(bulk.size()).isBetween(50, 54);

    // The same partitions, listed (the peer holds some of each): batches of batchRecords.
    MemoryReplica half = new MemoryReplica(PARAMS, ESTIMATORS);
    source.forEach(
        x -> {
          if (new String(x.key(), StandardCharsets.UTF_8).hashCode() % 2 == 0) {
            half.write(x);
          }
        });
    List<Integer> listed = batchSizes(filled(2000, 100), half, repair);
    assertThat(listed).allSatisfy(n -> assertThat(n).isBetween(1, 10));

    // Bytes still close a bulk batch: 1 KiB holds 7 records of 136 bytes (a row batch may pass
    // the cap by its last row: 8).
    RepairConfig small =
        new RepairConfig(3, 10, 1024, 40, 160, 3_600_000L, () -> NOW).withRowBatches(rowBatches);
    List<Integer> byBytes =
        batchSizes(filled(500, 100), new MemoryReplica(PARAMS, ESTIMATORS), small);
    assertThat(byBytes).allSatisfy(n -> assertThat(n).isBetween(1, rowBatches ? 8 : 7));
    assertThat(byBytes.stream().mapToInt(Integer::intValue).sum()).isEqualTo(500);
  }

  /** A store over a {@link MemoryReplica}: its lookups and applies; a test overrides the rest. */
  private abstract static class OverMemory implements RecordStore {
    final MemoryReplica source;

    OverMemory(MemoryReplica source) {
      this.source = source;
    }

    @Override
    public List<ReplicaRecord> recordsFor(int partition, long[] elements) {
      return source.recordsFor(partition, elements);
    }

    @Override
    public ApplyOutcome apply(List<ReplicaRecord> records) {
      return source.apply(records);
    }
  }

  /**
   * {@code source} as a store that reads its lists by a range scan ({@link
   * RecordStore.PartitionScan#ranged}), as the agent's store does for a dense list of small
   * records.
   */
  private static RecordStore rangedLists(MemoryReplica source) {
    return lists(source, true, false);
  }

  /**
   * {@code source} as a store whose lists are read as {@code ranged} says and whose rows are copied
   * as stored when {@code storedRows} ({@link RecordStore.PartitionScan#storedRows}, as the agent's
   * store does for the lists it looks up).
   */
  private static RecordStore lists(MemoryReplica source, boolean ranged, boolean storedRows) {
    return new OverMemory(source) {
      @Override
      public PartitionScan scanListed(int partition, long[] elements) {
        PartitionScan inner = source.scanListed(partition, elements);
        return new PartitionScan() {
          @Override
          public List<ReplicaRecord> next(int maxRecords, long maxBytes) {
            return inner.next(maxRecords, maxBytes);
          }

          @Override
          public int nextRows(RowBatches.Builder out, int maxRecords, long maxBytes) {
            return inner.nextRows(out, maxRecords, maxBytes);
          }

          @Override
          public boolean ranged() {
            return ranged;
          }

          @Override
          public boolean storedRows() {
            return storedRows;
          }

          @Override
          public void close() {
            inner.close();
          }
        };
      }
    };
  }

  /**
   * A list the store reads by one range scan ({@link RecordStore.PartitionScan#ranged}) goes in
   * batches as large as a bulk partition's, still closed at the batch bytes; the same list looked
   * up goes in batches of {@code batchRecords} (above).
   */
  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void aListReadByARangeScanGoesInBulkBatches(boolean rowBatches) {
    RepairConfig repair =
        new RepairConfig(3, 10, 1 << 20, 40, 160, 3_600_000L, () -> NOW).withRowBatches(rowBatches);
    ListsSent sent = sendListsToHalf(repair, RepairExchangeTest::rangedLists);
    List<Integer> sizes = sent.sizes();
    assertThat(sizes).allSatisfy(n -> assertThat(n).isBetween(1, 40));
    assertThat(sizes.stream().mapToInt(Integer::intValue).sum()).isEqualTo(sent.missing());
    // About 1 000 records over 4 partitions: full batches of 40, so far fewer than 100 batches.
    assertThat(sizes.stream().mapToInt(Integer::intValue).max().orElseThrow()).isEqualTo(40);
    assertThat(sizes.size()).isLessThan(40);
    // Rows a range scan read go as rows when both offered them, every batch, and the receiver
    // applies them as rows (no record decoded and encoded again).
    assertThat(sent.rowFrames()).isEqualTo(rowBatches ? sizes.size() : 0);
    assertThat(sent.appliedAsRows()).isEqualTo(rowBatches ? sent.missing() : 0);
    assertThat(sent.appliedAsRecords()).isEqualTo(rowBatches ? 0 : sent.missing());
  }

  /**
   * A list the store looks up but copies as stored rows ({@link
   * RecordStore.PartitionScan#storedRows}) goes as rows when both sides offer them, in batches of
   * {@code batchRecords} like looked-up records; as records otherwise. Either way the peer ends up
   * with exactly the missing records.
   */
  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void aLookedUpListOfStoredRowsGoesAsRowsInLookupSizedBatches(boolean rowBatches) {
    RepairConfig repair =
        new RepairConfig(3, 10, 1 << 20, 40, 160, 3_600_000L, () -> NOW).withRowBatches(rowBatches);
    ListsSent sent = sendListsToHalf(repair, source -> lists(source, false, true));
    List<Integer> sizes = sent.sizes();
    assertThat(sizes).allSatisfy(n -> assertThat(n).isBetween(1, 10));
    assertThat(sizes.stream().mapToInt(Integer::intValue).sum()).isEqualTo(sent.missing());
    assertThat(sent.rowFrames()).isEqualTo(rowBatches ? sizes.size() : 0);
    assertThat(sent.initiator().repairStats().rowBatchesSent()).isEqualTo(sent.rowFrames());
    assertThat(sent.appliedAsRows()).isEqualTo(rowBatches ? sent.missing() : 0);
    assertThat(sent.appliedAsRecords()).isEqualTo(rowBatches ? 0 : sent.missing());
  }

  /**
   * What a round of {@link #sendListsToHalf} sent: batch sizes, row frames, the initiator; and how
   * many records the receiving store was given as rows ({@link RecordStore#applyRows}) and as
   * records ({@link RecordStore#apply}).
   */
  private record ListsSent(
      List<Integer> sizes,
      int rowFrames,
      int missing,
      ReconcileSession initiator,
      int appliedAsRows,
      int appliedAsRecords) {}

  /**
   * One round from a replica of 2 000 records, read through {@code lists} (its lists as that store
   * reads them), to one that holds about half of them, with {@code repair}; checks that it
   * succeeded and that the other replica then holds exactly the source's records.
   */
  private static ListsSent sendListsToHalf(
      RepairConfig repair, java.util.function.Function<MemoryReplica, RecordStore> lists) {
    MemoryReplica source = filled(2000, 100);
    MemoryReplica half = new MemoryReplica(PARAMS, ESTIMATORS);
    source.forEach(
        x -> {
          if (new String(x.key(), StandardCharsets.UTF_8).hashCode() % 2 == 0) {
            half.write(x);
          }
        });
    int missing = source.size() - half.size();
    List<Integer> sizes = new ArrayList<>();
    AtomicInteger rowFrames = new AtomicInteger();
    ReconcileSession i =
        ReconcileSession.initiator(config(repair), source.sketches(), lists.apply(source), null);
    AtomicInteger asRows = new AtomicInteger();
    AtomicInteger asRecords = new AtomicInteger();
    RecordStore receiver =
        new OverMemory(half) {
          @Override
          public ApplyOutcome apply(List<ReplicaRecord> records) {
            asRecords.addAndGet(records.size());
            return half.apply(records);
          }

          @Override
          public ApplyOutcome applyRows(RowBatches.Rows rows) {
            asRows.addAndGet(rows.size());
            return half.applyRows(rows);
          }
        };
    ReconcileSession r =
        ReconcileSession.responder(
            SessionConfig.of("c", "right", 0).withRepair(repair), half.sketches(), receiver);
    LocalRound.run(
        i,
        r,
        e -> {
          if (isBatch(e)) {
            sizes.add(
                e.hasRowBatch()
                    ? e.getRowBatch().getCount()
                    : e.getRecordBatch().getRecordsCount());
          }
          if (e.hasRowBatch()) {
            rowFrames.incrementAndGet();
          }
          return e;
        },
        UnaryOperator.identity());
    assertThat(i.succeeded()).as("%s", i.failure()).isTrue();
    assertThat(contents(half)).isEqualTo(contents(source));
    return new ListsSent(sizes, rowFrames.get(), missing, i, asRows.get(), asRecords.get());
  }

  @Test
  void aConfigWhoseBulkBatchesAreSmallerThanItsBatchesOrThanItAcceptsIsRefused() {
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> new RepairConfig(3, 10, 1 << 20, 9, 160, 0L, () -> NOW))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("bulk batch records 9");
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> new RepairConfig(3, 10, 1 << 20, 200, 160, 0L, () -> NOW))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("max batch records 160");
    assertThat(new RepairConfig(3, 10, 1 << 20, 40, 0L, () -> NOW).bulkBatchRecords())
        .isEqualTo(10);
  }

  /**
   * Row batches are used only when both sides offer them, and then for records read by a range
   * scan: a catch-up (bulk) and a partial repair (listed, looked up) between every pairing of
   * offers converge, and the frames that carried the records are the ones negotiated.
   */
  @ParameterizedTest
  @CsvSource({"true,true", "true,false", "false,true", "false,false"})
  void rowBatchesAreUsedOnlyWhenBothOfferThemAndOnlyForRangeScans(
      boolean initiatorOffers, boolean responderOffers) {
    boolean used = initiatorOffers && responderOffers;
    RepairConfig base = new RepairConfig(3, 10, 1 << 20, 40, 160, 3_600_000L, () -> NOW);
    for (boolean bulk : new boolean[] {true, false}) {
      MemoryReplica source = filled(600, 50);
      MemoryReplica target = new MemoryReplica(PARAMS, ESTIMATORS);
      if (!bulk) {
        source.forEach(
            x -> {
              if (new String(x.key(), StandardCharsets.UTF_8).hashCode() % 3 != 0) {
                target.write(x);
              }
            });
      }
      long missing = (long) source.size() - target.size();
      ReconcileSession i =
          ReconcileSession.initiator(
              config(base.withRowBatches(initiatorOffers)), target.sketches(), target, null);
      ReconcileSession r =
          ReconcileSession.responder(
              SessionConfig.of("c", "right", 0).withRepair(base.withRowBatches(responderOffers)),
              source.sketches(),
              source);
      AtomicInteger rowFrames = new AtomicInteger();
      AtomicInteger recordFrames = new AtomicInteger();
      LocalRound.run(
          i,
          r,
          UnaryOperator.identity(),
          e -> {
            if (e.hasRowBatch()) {
              rowFrames.incrementAndGet();
            }
            if (e.hasRecordBatch()) {
              recordFrames.incrementAndGet();
            }
            return e;
          });
      String what = "offers " + initiatorOffers + "/" + responderOffers + ", bulk " + bulk;
      assertThat(i.succeeded()).as(what + ": " + i.failure()).isTrue();
      assertThat(contents(target)).as(what).isEqualTo(contents(source));
      if (bulk && used) {
        assertThat(rowFrames.get()).as(what).isPositive();
        assertThat(recordFrames.get()).as(what).isZero();
        assertThat(i.repairStats().rowBatchesReceived()).isEqualTo(rowFrames.get());
        assertThat(r.repairStats().rowBatchesSent()).isEqualTo(rowFrames.get());
      } else {
        assertThat(rowFrames.get()).as(what).isZero();
        assertThat(recordFrames.get()).as(what).isPositive();
      }
      assertThat(i.repairStats().recordsReceived()).as(what).isEqualTo(missing);
    }
  }

  /** A row batch in a session that did not negotiate them is refused, not taken. */
  @Test
  void aRowBatchNobodyAgreedToIsRefused() {
    RepairConfig off =
        new RepairConfig(3, 10, 1 << 20, 40, 160, 3_600_000L, () -> NOW).withRowBatches(false);
    MemoryReplica source = filled(100, 20);
    MemoryReplica empty = new MemoryReplica(PARAMS, ESTIMATORS);
    ReconcileSession i = ReconcileSession.initiator(config(off), empty.sketches(), empty, null);
    ReconcileSession r =
        ReconcileSession.responder(
            SessionConfig.of("c", "right", 0).withRepair(off), source.sketches(), source);
    LocalRound.run(
        i,
        r,
        UnaryOperator.identity(),
        e -> {
          if (!e.hasRecordBatch()) {
            return e;
          }
          RecordBatch b = e.getRecordBatch();
          RowBatches.Builder rows = new RowBatches.Builder(PARAMS.spec(), 64);
          for (var x : b.getRecordsList()) {
            rows.add(
                new ReplicaRecord(
                    x.getKey().toByteArray(),
                    x.getValue().toByteArray(),
                    x.getVersion(),
                    x.getOrigin(),
                    x.getTombstone()));
          }
          return e.toBuilder().setRowBatch(rows.build(b.getPartition(), b.getBatchSeq())).build();
        });
    assertThat(i.failure().orElseThrow().message())
        .contains("RowBatch 0 in a session without row batches");
    assertThat(contents(empty)).isEmpty();
  }

  /** A bulk partition's record from the future is refused and counted as a listed one is. */
  @Test
  void aRowFromTheFutureIsRefusedAndCounted() {
    MemoryReplica source = filled(300, 20);
    byte[] key = b("from-the-future");
    source.write(ReplicaRecord.of(key, b("x"), v(NOW + 7_200_000L), 2)); // 2 h ahead, skew 1 h
    MemoryReplica empty = new MemoryReplica(PARAMS, ESTIMATORS);
    ReconcileSession i = LocalRound.repair(config(repairConfig(8, 100)), empty, source);
    assertThat(i.repairStats().rowBatchesReceived()).isPositive();
    assertThat(empty.get(key)).isEmpty();
    assertThat(i.repairStats().clockSkewRefused()).isEqualTo(1);
    assertThat(i.repairStats().clockSkewKeys()).singleElement().isEqualTo(key);
    assertThat(empty.size()).isEqualTo(300);
  }

  @Test
  void aRecordFromTheFutureIsRefusedCountedAndTheRoundSaysSo() {
    MemoryReplica[] m = divergent(5, 200, 0, 3);
    byte[] key = b("from-the-future");
    m[1].write(ReplicaRecord.of(key, b("x"), v(NOW + 7_200_000L), 2)); // 2 h ahead, skew 1 h
    ReconcileSession i = LocalRound.repair(config(repairConfig(8, 100)), m[0], m[1]);
    assertThat(m[0].get(key)).isEmpty();
    assertThat(i.repairStats().clockSkewRefused()).isEqualTo(1);
    assertThat(i.repairStats().clockSkewKeys()).singleElement().isEqualTo(key);
    int p = HashSpec.partition(PARAMS.spec().keyHash(key), PARAMS.partitionsLog2());
    assertThat(i.repairStats().stillDiffering()).containsExactly(p);
    assertThat(m[0].size()).isEqualTo(m[1].size() - 1);
  }

  /** CRC32C of a row batch's partition, sequence and rows (wire-format.md, "Row batches"). */
  private static int rowBatchCrc(int partition, long seq, ByteString rows) {
    java.util.zip.CRC32C c = new java.util.zip.CRC32C();
    c.update(
        java.nio.ByteBuffer.allocate(12)
            .order(java.nio.ByteOrder.LITTLE_ENDIAN)
            .putInt(partition)
            .putLong(seq)
            .flip());
    c.update(rows.asReadOnlyByteBuffer());
    return (int) c.getValue();
  }

  @ParameterizedTest
  @CsvSource({"false,false", "true,false", "false,true", "true,true"})
  void aBatchRelabelledToAnotherPartitionIsRefused(boolean recomputeChecksum, boolean rowBatches) {
    MemoryReplica[] m = divergent(6, 50, 40, 0);
    ReconcileSession i =
        ReconcileSession.initiator(
            config(repairConfig(8, 100).withRowBatches(rowBatches)),
            m[0].sketches(),
            rowBatches ? rangedLists(m[0]) : m[0],
            null);
    ReconcileSession r =
        ReconcileSession.responder(SessionConfig.of("c", "right", 0), m[1].sketches(), m[1]);
    UnaryOperator<Envelope> relabel =
        e -> {
          if (e.hasRowBatch()) {
            RowBatch rb = e.getRowBatch();
            int other = (rb.getPartition() + 1) % 4;
            RowBatch.Builder b = rb.toBuilder().setPartition(other);
            if (recomputeChecksum) {
              b.setCrc32C(rowBatchCrc(other, rb.getBatchSeq(), rb.getRows()));
            }
            return e.toBuilder().setRowBatch(b).build();
          }
          if (!e.hasRecordBatch()) {
            return e;
          }
          RecordBatch rb = e.getRecordBatch();
          int other = (rb.getPartition() + 1) % 4;
          RecordBatch.Builder b = rb.toBuilder().setPartition(other);
          if (recomputeChecksum) {
            b.setCrc32C(RecordBatches.crc(other, rb.getBatchSeq(), rb.getRecordsList()));
          }
          return e.toBuilder().setRecordBatch(b).build();
        };
    AtomicInteger rowFrames = new AtomicInteger();
    LocalRound.run(
        i,
        r,
        e -> {
          if (e.hasRowBatch()) {
            rowFrames.incrementAndGet();
          }
          return relabel.apply(e);
        },
        UnaryOperator.identity());
    assertThat(rowFrames.get() > 0).isEqualTo(rowBatches);
    assertThat(r.failure()).hasValueSatisfying(f -> assertThat(f.code()).isEqualTo(Code.MALFORMED));
    // The checksum covers the partition; past it, the records' own keys give the label away.
    assertThat(r.failure().orElseThrow().message())
        .contains(recomputeChecksum ? "holds a record of partition" : "checksum mismatch");
    assertThat(i.failure()).hasValueSatisfying(f -> assertThat(f.byPeer()).isTrue());
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void aBatchCorruptedInTransitIsRefusedWhole(boolean rowBatches) {
    MemoryReplica[] m = divergent(7, 50, 40, 0);
    int before = m[1].size();
    ReconcileSession i =
        ReconcileSession.initiator(
            config(repairConfig(8, 100).withRowBatches(rowBatches)),
            m[0].sketches(),
            rowBatches ? rangedLists(m[0]) : m[0],
            null);
    ReconcileSession r =
        ReconcileSession.responder(SessionConfig.of("c", "right", 0), m[1].sketches(), m[1]);
    UnaryOperator<Envelope> flip =
        e -> {
          if (e.hasRowBatch()) {
            assertThat(rowBatches).isTrue();
            RowBatch rb = e.getRowBatch();
            byte[] bytes = rb.getRows().toByteArray();
            bytes[bytes.length / 2] ^= 1;
            return e.toBuilder()
                .setRowBatch(rb.toBuilder().setRows(ByteString.copyFrom(bytes)))
                .build();
          }
          if (!e.hasRecordBatch()) {
            return e;
          }
          RecordBatch rb = e.getRecordBatch();
          ByteString v = rb.getRecords(0).getValue();
          byte[] bytes = v.toByteArray();
          bytes[0] ^= 1;
          return e.toBuilder()
              .setRecordBatch(
                  rb.toBuilder()
                      .setRecords(
                          0, rb.getRecords(0).toBuilder().setValue(ByteString.copyFrom(bytes))))
              .build();
        };
    LocalRound.run(i, r, flip, UnaryOperator.identity());
    assertThat(r.failure().orElseThrow().message()).contains("checksum mismatch");
    assertThat(m[1].size()).isEqualTo(before);
  }

  @Test
  void aStoreThatCannotApplyEndsTheRoundOnBothSidesAndSaysWhich() {
    MemoryReplica[] m = divergent(8, 50, 30, 0);
    RecordStore broken =
        new RecordStore() {
          @Override
          public List<ReplicaRecord> recordsFor(int partition, long[] elements) {
            return m[1].recordsFor(partition, elements);
          }

          @Override
          public ApplyOutcome apply(List<ReplicaRecord> records) {
            throw new IllegalStateException("disk full");
          }
        };
    ReconcileSession i =
        ReconcileSession.initiator(config(repairConfig(8, 100)), m[0].sketches(), m[0], null);
    ReconcileSession r =
        ReconcileSession.responder(SessionConfig.of("c", "right", 0), m[1].sketches(), broken);
    LocalRound.run(i, r);
    assertThat(r.failure().orElseThrow().message())
        .contains("apply of batch")
        .contains("failed: disk full");
    assertThat(i.failure().orElseThrow().message()).contains("could not apply batch");
    assertThat(i.failure().orElseThrow().byPeer()).isTrue();
  }

  /**
   * A session aborted while it streams bulk partitions releases every scan it holds, even when
   * releasing one throws: the session is failed, its queue is empty, every scan was closed, and the
   * first exception reaches the caller with the others suppressed.
   */
  @Test
  void anAbortWhoseScanCloseThrowsStillFailsTheSessionAndClosesEveryScan() {
    MemoryReplica source = filled(2000, 100);
    MemoryReplica empty = new MemoryReplica(PARAMS, ESTIMATORS);
    AtomicInteger opened = new AtomicInteger();
    AtomicInteger closed = new AtomicInteger();
    RecordStore throwingScans =
        new OverMemory(source) {
          @Override
          public PartitionScan scan(int partition, PartitionSketches sketches) {
            PartitionScan inner = source.scan(partition, sketches);
            opened.incrementAndGet();
            return new PartitionScan() {
              @Override
              public List<ReplicaRecord> next(int maxRecords, long maxBytes) {
                return inner.next(maxRecords, maxBytes);
              }

              @Override
              public void close() {
                inner.close();
                closed.incrementAndGet();
                throw new IllegalStateException("scan of partition " + partition + " not released");
              }
            };
          }
        };
    RepairConfig repair = new RepairConfig(3, 10, 1 << 20, 40, 160, 3_600_000L, () -> NOW);
    ReconcileSession i =
        ReconcileSession.initiator(config(repair), source.sketches(), throwingScans, null);
    ReconcileSession r =
        ReconcileSession.responder(
            SessionConfig.of("c", "right", 0).withRepair(repair), empty.sketches(), empty);
    List<RuntimeException> thrown = new ArrayList<>();
    LocalRound.run(
        i,
        r,
        e -> {
          if (isBatch(e) && thrown.isEmpty() && i.failure().isEmpty()) {
            try {
              i.abort("peer gone");
            } catch (RuntimeException ex) {
              thrown.add(ex);
            }
          }
          return e;
        },
        UnaryOperator.identity());
    assertThat(opened.get()).as("bulk partitions streaming at the abort").isGreaterThan(1);
    assertThat(closed.get()).as("scans closed").isEqualTo(opened.get());
    assertThat(thrown).hasSize(1);
    assertThat(thrown.get(0)).hasMessageContaining("not released");
    assertThat(thrown.get(0).getSuppressed()).hasSize(opened.get() - 1);
    assertThat(i.failure().orElseThrow().message()).isEqualTo("peer gone");
    assertThat(i.failure().orElseThrow().byPeer()).isFalse();
    assertThat(i.isFinished()).isTrue();
  }

  /** The partitions a round marks repaired, in order, and how often it completed. */
  private static final class Marks implements RoundProgress {
    final List<Integer> marked = new ArrayList<>();
    final AtomicInteger completed = new AtomicInteger();

    @Override
    public void partitionRepaired(int partition) {
      marked.add(partition);
    }

    @Override
    public void roundComplete() {
      completed.incrementAndGet();
    }
  }

  @Test
  void progressMarksEveryPartitionAndClearsAtTheEnd() {
    MemoryReplica[] m = divergent(9, 400, 300, 300);
    Marks progress = new Marks();
    List<Integer> marked = progress.marked;
    AtomicInteger completed = progress.completed;
    ReconcileSession i =
        ReconcileSession.initiator(config(repairConfig(2, 16)), m[0].sketches(), m[0], progress);
    ReconcileSession r =
        ReconcileSession.responder(
            SessionConfig.of("c", "right", 0).withRepair(repairConfig(2, 16)),
            m[1].sketches(),
            m[1]);
    LocalRound.run(i, r);
    assertThat(i.failure()).isEmpty();
    assertThat(r.failure()).isEmpty();
    assertThat(i.succeeded()).isTrue();
    assertThat(marked).containsExactly(0, 1, 2, 3);
    assertThat(completed.get()).isEqualTo(1);
  }

  @Test
  void aWriteDuringTheRoundIsReportedNotHidden() {
    MemoryReplica[] m = divergent(10, 300, 20, 20);
    byte[] late = b("written-during-the-round");
    ReconcileSession i =
        ReconcileSession.initiator(config(repairConfig(8, 100)), m[0].sketches(), m[0], null);
    ReconcileSession r =
        ReconcileSession.responder(SessionConfig.of("c", "right", 0), m[1].sketches(), m[1]);
    LocalRound.run(
        i,
        r,
        UnaryOperator.identity(),
        e -> {
          if (e.hasRepairEnd()) {
            m[1].write(ReplicaRecord.of(late, b("late"), v(NOW), 2));
          }
          return e;
        });
    assertThat(i.succeeded()).isTrue();
    int p = HashSpec.partition(PARAMS.spec().keyHash(late), PARAMS.partitionsLog2());
    assertThat(i.repairStats().stillDiffering()).containsExactly(p);
    assertThat(r.repairStats().verifyMismatch()).isTrue();
  }

  @Test
  void aDryRunMovesNothing() {
    MemoryReplica[] m = divergent(11, 300, 30, 40);
    int l = m[0].size();
    int rr = m[1].size();
    ReconcileSession i =
        ReconcileSession.initiator(
            config(repairConfig(8, 100)).withDryRun(true), m[0].sketches(), m[0], null);
    ReconcileSession r =
        ReconcileSession.responder(SessionConfig.of("c", "right", 0), m[1].sketches(), m[1]);
    LocalRound.run(i, r);
    assertThat(i.succeeded()).isTrue();
    assertThat(r.succeeded()).isTrue();
    assertThat(OutcomeSummary.of(i.outcomes()).difference()).isEqualTo(30 + 40 + 2 * 20);
    assertThat(m[0].size()).isEqualTo(l);
    assertThat(m[1].size()).isEqualTo(rr);
    assertThat(i.stats().recordBytes()).isZero();
  }

  @Test
  void aResponderWithoutRecordsRefusesARepair() {
    MemoryReplica[] m = divergent(12, 30, 3, 3);
    ReconcileSession i =
        ReconcileSession.initiator(config(repairConfig(8, 100)), m[0].sketches(), m[0], null);
    ReconcileSession r =
        ReconcileSession.responder(SessionConfig.of("c", "right", 0), m[1].sketches());
    LocalRound.run(i, r);
    assertThat(i.failure().orElseThrow().code()).isEqualTo(Code.PARAMS);
    assertThat(i.failure().orElseThrow().message()).contains("only compares");
  }

  @Test
  void aRepairEndThatMiscountsIsRefused() {
    MemoryReplica[] m = divergent(13, 100, 50, 0);
    ReconcileSession i =
        ReconcileSession.initiator(config(repairConfig(8, 10)), m[0].sketches(), m[0], null);
    ReconcileSession r =
        ReconcileSession.responder(SessionConfig.of("c", "right", 0), m[1].sketches(), m[1]);
    LocalRound.run(
        i,
        r,
        e ->
            e.hasRepairEnd()
                ? e.toBuilder()
                    .setRepairEnd(
                        RepairEnd.newBuilder().setBatches(e.getRepairEnd().getBatches() + 1))
                    .build()
                : e,
        UnaryOperator.identity());
    assertThat(r.failure().orElseThrow().message()).contains("RepairEnd after");
  }

  @Test
  void aDivergenceBeyondTheListCapIsRepairedInStepsNeverRefused() {
    MemoryReplica[] m = divergent(14, 200, 57, 0);
    SessionConfig capped = config(repairConfig(8, 100)).withLimits(new SessionLimits(10, 1 << 16));
    int rounds = 0;
    boolean converged = false;
    while (!converged && rounds < 20) {
      ReconcileSession i = LocalRound.repair(capped, m[0], m[1]);
      rounds++;
      converged = i.repairStats().stillDiffering().isEmpty();
      if (!converged) {
        assertThat(OutcomeSummary.of(i.outcomes()).partial()).isPositive();
      }
    }
    assertThat(contents(m[0])).isEqualTo(contents(m[1]));
    // 57 + 2 x 20 conflicting records, at most 10 listed per partition and round.
    assertThat(rounds).isBetween(3, 12);
  }

  /**
   * The receiving side's store as the agent's ingesting store behaves: a bulk partition's records
   * are held back until {@code finish}; it notes the order of the calls.
   */
  private static final class DeferringStore extends OverMemory {
    final List<String> calls = new ArrayList<>();
    String failFinishOf;
    int open;

    DeferringStore(MemoryReplica inner) {
      super(inner);
    }

    @Override
    public ApplyOutcome apply(List<ReplicaRecord> records) {
      calls.add("apply");
      return super.apply(records);
    }

    @Override
    public PartitionLoad load(int partition) {
      calls.add("load " + partition);
      assertThat(open).as("loads open at once").isZero();
      open++;
      List<ReplicaRecord> held = new ArrayList<>();
      return new PartitionLoad() {
        boolean closed;

        @Override
        public ApplyOutcome add(List<ReplicaRecord> records) {
          held.addAll(records);
          return ApplyOutcome.EMPTY;
        }

        @Override
        public ApplyOutcome finish() {
          calls.add("finish " + partition);
          if (("finish " + partition).equals(failFinishOf)) {
            throw new IllegalStateException("ingest failed: No space left on device");
          }
          ApplyOutcome out = source.apply(held);
          held.clear();
          return out;
        }

        @Override
        public void close() {
          if (!closed) {
            closed = true;
            open--;
            calls.add("close " + partition);
          }
        }
      };
    }
  }

  /**
   * A round in which {@code empty} (the initiator) catches up from {@code source}: batches of at
   * most 10 records, 40 of a bulk partition.
   */
  private static ReconcileSession[] catchUp(
      DeferringStore empty, MemoryReplica source, RoundProgress progress) {
    RepairConfig repair = new RepairConfig(3, 10, 1 << 20, 40, 1 << 20, 3_600_000L, () -> NOW);
    return new ReconcileSession[] {
      ReconcileSession.initiator(config(repair), empty.source.sketches(), empty, progress),
      ReconcileSession.responder(
          SessionConfig.of("c", "right", 0).withRepair(repair), source.sketches(), source)
    };
  }

  @Test
  void aBulkPartitionIsLoadedWholeAndCountedWhenItsLoadFinishes() {
    MemoryReplica source = filled(2000, 100);
    DeferringStore empty = new DeferringStore(new MemoryReplica(PARAMS, ESTIMATORS));
    List<String> marks = new ArrayList<>();
    RoundProgress progress =
        new RoundProgress() {
          @Override
          public void partitionRepaired(int partition) {
            // A partition is marked only once its load has made it visible.
            assertThat(empty.calls).contains("finish " + partition);
            marks.add("mark " + partition);
          }

          @Override
          public void roundComplete() {}
        };
    ReconcileSession[] s = catchUp(empty, source, progress);
    ReconcileSession i = s[0];
    LocalRound.run(i, s[1]);
    assertThat(i.succeeded()).as(i.failure().toString()).isTrue();
    assertThat(i.repairStats().verified()).isTrue();
    assertThat(contents(empty.source)).isEqualTo(contents(source));
    assertThat(i.repairStats().applied()).isEqualTo(2000);
    assertThat(i.repairStats().batchesReceived()).isGreaterThan(4); // several batches per load
    assertThat(empty.calls).doesNotContain("apply");
    List<String> want = new ArrayList<>();
    for (int p = 0; p < PARAMS.partitions(); p++) {
      want.addAll(List.of("load " + p, "finish " + p, "close " + p));
    }
    assertThat(empty.calls).isEqualTo(want);
    assertThat(marks).hasSize(PARAMS.partitions());
  }

  @Test
  void aLoadThatCannotFinishFailsTheRoundAndTellsThePeer() {
    for (int last : new int[] {0, PARAMS.partitions() - 1}) {
      MemoryReplica source = filled(2000, 100);
      DeferringStore empty = new DeferringStore(new MemoryReplica(PARAMS, ESTIMATORS));
      empty.failFinishOf = "finish " + last;
      ReconcileSession[] s = catchUp(empty, source, null);
      ReconcileSession i = s[0];
      ReconcileSession r = s[1];
      LocalRound.run(i, r);
      assertThat(i.failure().orElseThrow().message())
          .as("partition %d", last)
          .contains("loading partition " + last + " failed")
          .contains("No space left on device");
      assertThat(i.failure().orElseThrow().byPeer()).isFalse();
      assertThat(r.failure()).isPresent(); // told: a refused batch or a refusal
      assertThat(empty.open).isZero();
      assertThat(empty.calls).contains("close " + last);
    }
  }

  @Test
  void anAbortedRoundClosesTheOpenLoadWithoutFinishingIt() {
    MemoryReplica source = filled(2000, 100);
    DeferringStore empty = new DeferringStore(new MemoryReplica(PARAMS, ESTIMATORS));
    ReconcileSession[] s = catchUp(empty, source, null);
    ReconcileSession i = s[0];
    ReconcileSession r = s[1];
    AtomicInteger batches = new AtomicInteger();
    LocalRound.run(
        i,
        r,
        UnaryOperator.identity(),
        e -> {
          if (isBatch(e) && batches.incrementAndGet() == 3) {
            i.abort("peer gone");
            return null;
          }
          return e;
        });
    assertThat(i.failure().orElseThrow().message()).isEqualTo("peer gone");
    assertThat(empty.calls).containsExactly("load 0", "close 0");
    assertThat(empty.open).isZero();
    assertThat(contents(empty.source)).isEmpty();
  }

  /**
   * The sender marks a partition it sent whole only once the receiver's load has made it visible:
   * an acknowledgement means taken, not visible, so a round cut after the last batch of a partition
   * was acknowledged, and before the receiver took a batch of the next one, must not have marked it
   * (the resumed round would skip records the receiver dropped).
   */
  @Test
  void theSenderMarksAPartitionSentWholeOnlyOnceItIsVisibleThere() {
    for (int cutAt = 1; cutAt < PARAMS.partitions(); cutAt++) {
      MemoryReplica source = filled(2000, 100);
      DeferringStore empty = new DeferringStore(new MemoryReplica(PARAMS, ESTIMATORS));
      Marks progress = new Marks();
      List<Integer> marked = progress.marked;
      RepairConfig repair = new RepairConfig(3, 10, 1 << 20, 40, 1 << 20, 3_600_000L, () -> NOW);
      ReconcileSession i =
          ReconcileSession.initiator(config(repair), source.sketches(), source, progress);
      ReconcileSession r =
          ReconcileSession.responder(
              SessionConfig.of("c", "right", 0).withRepair(repair), empty.source.sketches(), empty);
      int cut = cutAt;
      LocalRound.run(
          i,
          r,
          e -> {
            if (isBatch(e) && batchPartition(e) == cut) {
              // The first batch of partition `cut` never arrives: the round is cut there.
              if (i.failure().isEmpty()) {
                i.abort("peer gone");
                r.abort("peer gone");
              }
              return null;
            }
            return e;
          },
          UnaryOperator.identity());
      assertThat(i.failure()).isPresent();
      for (int p : marked) {
        assertThat(empty.calls).as("cut at %d, marked %s", cut, marked).contains("finish " + p);
      }
      assertThat(marked).as("cut at %d", cut).hasSize(cut - 1);
    }
  }
}
