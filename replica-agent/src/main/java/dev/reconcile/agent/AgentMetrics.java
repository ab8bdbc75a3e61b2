package dev.reconcile.agent;

import dev.reconcile.agent.store.ReplicaStore;
import dev.reconcile.core.ReconcileSession;
import dev.reconcile.core.SessionStats;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmInfoMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The agent's Prometheus metrics (names in docs/operations.md): its own counters, Micrometer's JVM
 * (memory, GC, threads, class loading) and process (CPU, uptime, file descriptors) binders, and the
 * RocksDB properties operators watch ({@link #bindStore}).
 */
public final class AgentMetrics implements AutoCloseable {
  /**
   * RocksDB properties exported per column family as {@code reconcile_rocksdb_NAME{cf}}: property
   * -> metric name.
   */
  static final Map<String, String> ROCKSDB_PER_CF =
      Map.of(
          "rocksdb.estimate-num-keys", "reconcile_rocksdb_estimate_num_keys",
          "rocksdb.cur-size-all-mem-tables", "reconcile_rocksdb_memtable_bytes",
          "rocksdb.num-immutable-mem-table", "reconcile_rocksdb_immutable_memtables",
          "rocksdb.estimate-pending-compaction-bytes", "reconcile_rocksdb_pending_compaction_bytes",
          "rocksdb.estimate-table-readers-mem", "reconcile_rocksdb_table_readers_bytes",
          "rocksdb.live-sst-files-size", "reconcile_rocksdb_live_sst_bytes",
          "rocksdb.estimate-live-data-size", "reconcile_rocksdb_live_data_bytes");

  /**
   * RocksDB properties of the whole database (the block cache is shared by the column families),
   * read through the records column family: property -> metric name.
   */
  static final Map<String, String> ROCKSDB_PER_DB =
      Map.of(
          "rocksdb.block-cache-usage", "reconcile_rocksdb_block_cache_usage_bytes",
          "rocksdb.block-cache-pinned-usage", "reconcile_rocksdb_block_cache_pinned_bytes",
          "rocksdb.block-cache-capacity", "reconcile_rocksdb_block_cache_capacity_bytes",
          "rocksdb.num-running-compactions", "reconcile_rocksdb_running_compactions",
          "rocksdb.num-running-flushes", "reconcile_rocksdb_running_flushes",
          "rocksdb.background-errors", "reconcile_rocksdb_background_errors");

  private final JvmGcMetrics gc = new JvmGcMetrics();

  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  final Counter roundsOk = counter("reconcile_rounds_total", "result", "ok");
  final Counter roundsFailed = counter("reconcile_rounds_total", "result", "failed");
  final Counter partitionsFast = counter("reconcile_partitions_total", "path", "fast");
  final Counter partitionsIblt = counter("reconcile_partitions_total", "path", "iblt");
  final Counter partitionsFallback = counter("reconcile_partitions_total", "path", "fallback");
  final Counter partitionsRateless = counter("reconcile_partitions_total", "path", "rateless");
  final Counter partitionsBulk = counter("reconcile_partitions_total", "path", "bulk");
  final Counter partitionsPartial = counter("reconcile_partitions_partial_total");
  final Counter symbolBytes = counter("reconcile_symbol_bytes_total");
  final Counter estimatorBytes = counter("reconcile_estimator_bytes_total");
  final Counter ibltBytes = counter("reconcile_iblt_bytes_total");
  final Counter digestBytes = counter("reconcile_digest_bytes_total");
  final Counter protocolBytes = counter("reconcile_protocol_bytes_total");
  final Counter decodeFailures = counter("reconcile_decode_failures_total");
  final Counter doublings = counter("reconcile_doublings_total");
  final Counter fallbacks = counter("reconcile_fallbacks_total");
  final Counter recordsSent = counter("reconcile_records_total", "direction", "sent");
  final Counter recordsReceived = counter("reconcile_records_total", "direction", "received");
  final Counter recordBytesSent = counter("reconcile_record_bytes_total", "direction", "sent");
  final Counter recordBytesReceived =
      counter("reconcile_record_bytes_total", "direction", "received");
  final Counter recordsApplied = counter("reconcile_records_applied_total", "result", "applied");
  final Counter recordsStale = counter("reconcile_records_applied_total", "result", "stale");
  final Counter recordsDuplicate =
      counter("reconcile_records_applied_total", "result", "duplicate");
  final Counter stillDiffering = counter("reconcile_partitions_still_differing_total");
  final Counter peerConnectionsOpened =
      counter("reconcile_peer_connections_total", "kind", "opened");
  final Counter peerConnectionsReused =
      counter("reconcile_peer_connections_total", "kind", "reused");
  final Counter peerConnectionsStale = counter("reconcile_peer_connections_total", "kind", "stale");
  final Timer roundDuration;
  final Timer sessionDuration;
  final DistributionSummary differenceSize;
  final AtomicLong lastRebuildMillis = new AtomicLong();
  final AtomicLong activeSessions = new AtomicLong();

  public AgentMetrics() {
    roundDuration =
        Timer.builder("reconcile_round_duration")
            .description("Reconciliation round, session and repair stream")
            .publishPercentileHistogram()
            .minimumExpectedValue(Duration.ofMillis(1))
            .maximumExpectedValue(Duration.ofMinutes(10))
            .register(registry);
    sessionDuration =
        Timer.builder("reconcile_session_duration")
            .description(
                "Reconciliation session (fingerprints to decoded difference), excluding the repair stream")
            .publishPercentileHistogram()
            .minimumExpectedValue(Duration.ofMillis(1))
            .maximumExpectedValue(Duration.ofMinutes(10))
            .register(registry);
    differenceSize =
        DistributionSummary.builder("reconcile_difference_elements").register(registry);
    registry.gauge("reconcile_sketch_rebuild_millis", lastRebuildMillis);
    registry.gauge("reconcile_active_sessions", activeSessions);
    new JvmMemoryMetrics().bindTo(registry);
    gc.bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ClassLoaderMetrics().bindTo(registry);
    new JvmInfoMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    new FileDescriptorMetrics().bindTo(registry);
  }

  /** Exports {@code store}'s RocksDB figures as gauges, read at each scrape. */
  void bindStore(ReplicaStore store) {
    Timer lockWait =
        Timer.builder("reconcile_store_write_lock_wait")
            .description(
                "How long a client's put or delete waited for the store's writer lock (behind a"
                    + " repair slice, a partition ingest, a purge batch or another write)")
            .publishPercentileHistogram()
            .minimumExpectedValue(Duration.ofNanos(1_000))
            .maximumExpectedValue(Duration.ofSeconds(10))
            .register(registry);
    store.onLocalWriteLockWait(nanos -> lockWait.record(nanos, TimeUnit.NANOSECONDS));
    FunctionCounter.builder("reconcile_sketch_upkeep_applied", store, s -> s.symbolUpkeep()[0])
        .description("Coded-symbol updates applied by the store's upkeep thread")
        .register(registry);
    FunctionCounter.builder(
            "reconcile_store_ingested_records", store, s -> s.stats().ingestedRecords())
        .description("Repair records written as ingested table files (bulk partitions)")
        .register(registry);
    Gauge.builder("reconcile_store_key_filter_bytes", store, s -> s.stats().keyFilterBytes())
        .description("Memory of the store's filter of its keys (KeyFilter)")
        .strongReference(true)
        .register(registry);
    FunctionCounter.builder(
            "reconcile_store_key_filter_skipped_reads",
            store,
            s -> s.stats().keyFilterSkippedReads())
        .description("Reads of a current record spared by the key filter (keys the store lacked)")
        .register(registry);
    FunctionCounter.builder(
            "reconcile_store_key_filter_false_positives",
            store,
            s -> s.stats().keyFilterFalsePositives())
        .description(
            "Reads of a current record the key filter let through that found none (false"
                + " positives, or keys purged since the filter was built)")
        .register(registry);
    Gauge.builder("reconcile_store_key_filter_segments", store, s -> s.stats().keyFilterSegments())
        .description("Segments of the key filter a query reads (1 after an open or a rebuild)")
        .strongReference(true)
        .register(registry);
    FunctionCounter.builder(
            "reconcile_store_key_filter_rebuilds", store, s -> s.stats().keyFilterRebuilds())
        .description("Rebuilds of the key filter into one segment since the start")
        .register(registry);
    FunctionCounter.builder(
            "reconcile_store_key_filter_denied_gets", store, s -> s.stats().keyFilterDeniedReads())
        .description("A client's reads of one key the key filter answered absent, without RocksDB")
        .register(registry);
    FunctionCounter.builder(
            "reconcile_store_unlogged_repair_batches", store, ReplicaStore::unloggedRepairBatches)
        .description(
            "Repair write batches written without the WAL (repair-wal false, batches of 256 KiB"
                + " and more), durable at the flush when the peer's stream ends")
        .register(registry);
    FunctionCounter.builder(
            "reconcile_store_unlogged_repair_flushes", store, ReplicaStore::unloggedRepairFlushes)
        .description("Flushes at the end of a peer's stream that made such batches durable")
        .register(registry);
    Gauge.builder("reconcile_sketch_upkeep_pending", store, s -> s.symbolUpkeep()[1])
        .description("Coded-symbol updates queued by writes and not yet applied")
        .strongReference(true)
        .register(registry);
    Gauge.builder("reconcile_store_direct_io", store, s -> s.directIo() ? 1 : 0)
        .description(
            "1 when RocksDB's flushes and compactions bypass the page cache (direct-io asked for"
                + " and taken by the data folder's file system), else 0")
        .strongReference(true)
        .register(registry);
    Gauge.builder("reconcile_store_wal_bytes", store, s -> nonNegative(s.walBytes()))
        .description(
            "Bytes of the store's live WAL files: what a restart after a crash replays (bounded"
                + " near 256 MiB)")
        .strongReference(true)
        .register(registry);
    for (Map.Entry<String, String> e : ROCKSDB_PER_CF.entrySet()) {
      for (String cf : ReplicaStore.COLUMN_FAMILIES) {
        String property = e.getKey();
        Gauge.builder(e.getValue(), store, s -> property(s, cf, property))
            .description("RocksDB " + property)
            .tag("cf", cf)
            .strongReference(true)
            .register(registry);
      }
    }
    for (Map.Entry<String, String> e : ROCKSDB_PER_DB.entrySet()) {
      String property = e.getKey();
      Gauge.builder(e.getValue(), store, s -> property(s, "records", property))
          .description("RocksDB " + property)
          .strongReference(true)
          .register(registry);
    }
  }

  private static double property(ReplicaStore s, String cf, String property) {
    return nonNegative(s.rocksProperty(cf, property));
  }

  private static double nonNegative(long v) {
    return v < 0 ? Double.NaN : v;
  }

  /** Releases the GC notification listeners. */
  @Override
  public void close() {
    gc.close();
  }

  private Counter counter(String name, String... tags) {
    return Counter.builder(name).tags(tags).register(registry);
  }

  /** A named refusal or disconnect reason (peer misbehaviour, authentication). */
  public void refused(String reason) {
    counter("reconcile_peer_refusals_total", "reason", reason).increment();
  }

  /** Received records refused before they reached the store (e.g. {@code clock_skew}). */
  public void recordsRefused(String reason, long n) {
    counter("reconcile_records_refused_total", "reason", reason).increment(n);
  }

  /** Counts a round that ended well, from its report and its session's counters. */
  void recordRound(RoundReport r, ReconcileSession session) {
    SessionStats s = session.stats();
    partitionsFast.increment(r.fastPath);
    partitionsIblt.increment(r.ibltPartitions);
    partitionsFallback.increment(r.fallbackPartitions);
    partitionsRateless.increment(r.ratelessPartitions);
    partitionsBulk.increment(r.bulkPartitions);
    partitionsPartial.increment(r.partialPartitions);
    symbolBytes.increment(s.symbolBytes());
    estimatorBytes.increment(s.estimatorBytes());
    ibltBytes.increment(s.ibltBytes());
    digestBytes.increment(s.digestBytes());
    protocolBytes.increment(s.protocolBytes());
    decodeFailures.increment(s.decodeFailures());
    doublings.increment(s.doublings());
    fallbacks.increment(s.fallbacks());
    sessionDuration.record(Duration.ofMillis(r.sessionMillis));
    differenceSize.record(r.missingLocal + r.missingRemote);
    recordsSent.increment(r.recordsSent);
    recordBytesSent.increment(r.recordBytesSent);
    recordsReceived.increment(r.recordsReceived);
    recordBytesReceived.increment(r.recordBytesReceived);
    recordsApplied.increment(r.applied);
    recordsStale.increment(r.stale);
    recordsDuplicate.increment(r.duplicate);
    if (r.clockSkewRefused > 0) {
      recordsRefused("clock_skew", r.clockSkewRefused);
    }
    stillDiffering.increment(r.stillDiffering.size());
  }

  public PrometheusMeterRegistry registry() {
    return registry;
  }

  public String scrape() {
    return registry.scrape();
  }
}
