package dev.reconcile.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.file.impl.FileResolverImpl;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The HTTP API against a real agent on loopback. */
class AdminApiTest {
  @TempDir Path dir;
  AgentCluster cluster;
  ReplicaAgent a;
  final HttpClient http = HttpClient.newHttpClient();

  @BeforeEach
  void start() throws Exception {
    cluster = new AgentCluster(dir);
    a = cluster.start("a", Map.of());
  }

  @AfterEach
  void stop() {
    cluster.close();
  }

  /**
   * The agent's Vert.x resolves no class-path files, so it makes no {@code vertx-cache-*} folder
   * under {@code java.io.tmpdir}: Vert.x deletes that folder only on a clean close, and every
   * killed agent left one behind.
   */
  @Test
  void agentMakesNoVertxFileCacheFolder() {
    assertThat(((FileResolverImpl) ((VertxInternal) a.vertx()).fileResolver()).cacheDir()).isNull();
  }

  HttpResponse<byte[]> call(ReplicaAgent agent, String method, String path, byte[] body)
      throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + agent.httpPort() + path));
    b.method(
        method,
        body == null
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofByteArray(body));
    return http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
  }

  /** A request the JDK client refuses to send (malformed escapes), over a plain socket. */
  static String rawStatusLine(ReplicaAgent agent, String requestLine) throws Exception {
    try (java.net.Socket s = new java.net.Socket("127.0.0.1", agent.httpPort())) {
      s.getOutputStream()
          .write(
              (requestLine + "\r\nHost: x\r\nConnection: close\r\n\r\n")
                  .getBytes(StandardCharsets.US_ASCII));
      return new java.io.BufferedReader(
              new java.io.InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII))
          .readLine();
    }
  }

  static String text(HttpResponse<byte[]> r) {
    return new String(r.body(), StandardCharsets.UTF_8);
  }

  /**
   * The API speaks HTTP/1.1 only: a client that asks to upgrade to HTTP/2 in clear text (the JDK's
   * client does by default) gets its answer in HTTP/1.1, and a raw "Upgrade: h2c" request is not
   * switched (no 101).
   */
  @Test
  void anH2cUpgradeIsAnsweredInHttp11() throws Exception {
    HttpClient h2 = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).build();
    HttpResponse<byte[]> r =
        h2.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + a.httpPort() + "/status"))
                .build(),
            HttpResponse.BodyHandlers.ofByteArray());
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.version()).isEqualTo(HttpClient.Version.HTTP_1_1);
    try (java.net.Socket s = new java.net.Socket("127.0.0.1", a.httpPort())) {
      String upgrade =
          String.join(
              "\r\n",
              "GET /status HTTP/1.1",
              "Host: x",
              "Connection: Upgrade, HTTP2-Settings",
              "Upgrade: h2c",
              "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA",
              "",
              "");
      s.getOutputStream().write(upgrade.getBytes(StandardCharsets.US_ASCII));
      String status =
          new java.io.BufferedReader(
                  new java.io.InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII))
              .readLine();
      assertThat(status).startsWith("HTTP/1.1 200");
    }
  }

  @Test
  void putGetDeleteWithVersions() throws Exception {
    var put = call(a, "PUT", "/kv/user%2F1", "alice".getBytes(StandardCharsets.UTF_8));
    assertThat(put.statusCode()).isEqualTo(204);
    long v1 =
        Long.parseUnsignedLong(put.headers().firstValue(AdminApi.VERSION_HEADER).orElseThrow());
    var get = call(a, "GET", "/kv/user%2F1", null);
    assertThat(get.statusCode()).isEqualTo(200);
    assertThat(text(get)).isEqualTo("alice");
    assertThat(get.headers().firstValue(AdminApi.VERSION_HEADER))
        .contains(Long.toUnsignedString(v1));
    var put2 = call(a, "PUT", "/kv/user%2F1", "bob".getBytes(StandardCharsets.UTF_8));
    long v2 =
        Long.parseUnsignedLong(put2.headers().firstValue(AdminApi.VERSION_HEADER).orElseThrow());
    assertThat(Long.compareUnsigned(v2, v1)).isPositive();
    assertThat(call(a, "DELETE", "/kv/user%2F1", null).statusCode()).isEqualTo(204);
    assertThat(call(a, "GET", "/kv/user%2F1", null).statusCode()).isEqualTo(404);
    assertThat(call(a, "GET", "/kv/never", null).statusCode()).isEqualTo(404);
    // The delete is a tombstone in the store, not an absence.
    assertThat(a.store().get("user/1".getBytes(StandardCharsets.UTF_8)).orElseThrow().tombstone())
        .isTrue();
  }

  @Test
  void binaryKeysArePercentEncodedBytes() throws Exception {
    byte[] key = {0, (byte) 0xff, '/', 't'};
    assertThat(call(a, "PUT", "/kv/%00%FF%2Ft", new byte[] {1, 2, 3}).statusCode()).isEqualTo(204);
    assertThat(a.store().get(key)).isPresent();
    assertThat(call(a, "GET", "/kv/" + KeyCodec.encode(key), null).body()).containsExactly(1, 2, 3);
    assertThat(rawStatusLine(a, "GET /kv/%zz HTTP/1.1")).contains(" 400 ");
    assertThat(call(a, "PUT", "/kv/caf%C3%A9", "x".getBytes(StandardCharsets.UTF_8)).statusCode())
        .isEqualTo(204);
    assertThat(call(a, "GET", "/kv/caf%C3%A9", null).statusCode()).isEqualTo(200);
  }

  @Test
  void bulkLoadStreamsBatches() throws Exception {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < 25_000; i++) {
      sb.append("bulk").append(i).append('\t').append("value%09").append(i).append('\n');
    }
    var r = call(a, "POST", "/kv", sb.toString().getBytes(StandardCharsets.UTF_8));
    assertThat(r.statusCode()).as(text(r)).isEqualTo(200);
    assertThat(new JsonObject(text(r)).getLong("loaded")).isEqualTo(25_000);
    assertThat(a.store().recordCount()).isEqualTo(25_000);
    assertThat(text(call(a, "GET", "/kv/bulk7", null))).isEqualTo("value\t7");
    var bad = call(a, "POST", "/kv", "ok\t1\nbad%g\t2\n".getBytes(StandardCharsets.UTF_8));
    assertThat(bad.statusCode()).isEqualTo(400);
    assertThat(text(bad)).contains("line 2");
  }

  @Test
  void healthStatusMetricsSelfCheck() throws Exception {
    call(a, "PUT", "/kv/x", "1".getBytes(StandardCharsets.UTF_8));
    assertThat(new JsonObject(text(call(a, "GET", "/health", null))).getString("status"))
        .isEqualTo("ok");
    JsonObject status = new JsonObject(text(call(a, "GET", "/status", null)));
    assertThat(status.getString("nodeId")).isEqualTo("a");
    assertThat(status.getLong("records")).isEqualTo(1);
    assertThat(status.getJsonArray("partitions")).hasSize(8);
    var self = call(a, "GET", "/selfcheck", null);
    assertThat(self.statusCode()).isEqualTo(200);
    assertThat(new JsonObject(text(self)).getBoolean("ok")).isTrue();
    String metrics = text(call(a, "GET", "/metrics", null));
    assertThat(metrics)
        .contains("reconcile_rounds_total")
        .contains("reconcile_round_duration_seconds")
        .contains("reconcile_sketch_rebuild_millis");
  }

  /** The value of the first sample of {@code name} with the given labels (or none). */
  static double sample(String metrics, String nameAndLabels) {
    for (String line : metrics.split("\n")) {
      if (line.startsWith(nameAndLabels + " ")) {
        return Double.parseDouble(line.substring(nameAndLabels.length() + 1).trim());
      }
    }
    throw new AssertionError("no sample " + nameAndLabels + " in /metrics");
  }

  /**
   * {@code direct-io=true} reaches the agent's store (its flushes and compactions then bypass the
   * page cache where the data folder takes O_DIRECT, as the test machines' file systems do) and
   * {@code reconcile_store_direct_io} says so; puts and reads go on as before.
   */
  @Test
  void directIoSettingReachesTheStoreAndTheMetric() throws Exception {
    ReplicaAgent d = cluster.start("d", Map.of("direct-io", "true"));
    assertThat(d.store().directIo()).isTrue();
    assertThat(call(d, "PUT", "/kv/k1", "v1".getBytes(StandardCharsets.UTF_8)).statusCode())
        .isEqualTo(204);
    assertThat(text(call(d, "GET", "/kv/k1", null))).isEqualTo("v1");
    assertThat(sample(text(call(d, "GET", "/metrics", null)), "reconcile_store_direct_io"))
        .isEqualTo(1.0);
  }

  @Test
  void metricsHaveJvmProcessAndRocksDbFigures() throws Exception {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < 5000; i++) {
      sb.append("m").append(i).append('\t').append("v").append(i).append('\n');
    }
    assertThat(call(a, "POST", "/kv", sb.toString().getBytes(StandardCharsets.UTF_8)).statusCode())
        .isEqualTo(200);
    String m = text(call(a, "GET", "/metrics", null));
    // JVM: memory, GC, threads, class loading.
    assertThat(m).containsPattern("jvm_memory_used_bytes\\{area=\"heap\",id=\"[^\"]+\"\\} [1-9]");
    assertThat(m)
        .contains("jvm_memory_max_bytes{area=\"heap\"")
        .contains("jvm_gc_memory_allocated_bytes_total")
        .contains("jvm_gc_live_data_size_bytes")
        .contains("jvm_info{");
    assertThat(sample(m, "jvm_threads_live_threads")).isGreaterThan(5);
    assertThat(sample(m, "jvm_classes_loaded_classes")).isGreaterThan(1000);
    // Process: CPU, uptime, file descriptors.
    assertThat(sample(m, "process_cpu_usage")).isBetween(0.0, 1.0);
    assertThat(sample(m, "process_uptime_seconds")).isPositive();
    assertThat(sample(m, "process_files_open_files")).isPositive();
    assertThat(sample(m, "process_files_max_files")).isPositive();
    assertThat(sample(m, "system_cpu_count")).isPositive();
    // RocksDB: the records are in the memtable of the records column family (with their digest
    // index rows in the digests family), the block cache has its configured capacity.
    assertThat(sample(m, "reconcile_rocksdb_estimate_num_keys{cf=\"records\"}"))
        .isBetween(4000.0, 6000.0);
    assertThat(sample(m, "reconcile_rocksdb_memtable_bytes{cf=\"records\"}"))
        .isGreaterThan(5000 * 10.0);
    assertThat(sample(m, "reconcile_rocksdb_memtable_bytes{cf=\"digests\"}")).isPositive();
    assertThat(sample(m, "reconcile_rocksdb_pending_compaction_bytes{cf=\"records\"}"))
        .isGreaterThanOrEqualTo(0);
    assertThat(sample(m, "reconcile_rocksdb_block_cache_capacity_bytes")).isEqualTo(64 << 20);
    assertThat(sample(m, "reconcile_rocksdb_block_cache_usage_bytes")).isGreaterThanOrEqualTo(0);
    assertThat(sample(m, "reconcile_rocksdb_background_errors")).isZero();
    // Client writes' waits for the writer lock: one sample per put.
    double puts = sample(m, "reconcile_store_write_lock_wait_seconds_count");
    for (int i = 0; i < 3; i++) {
      assertThat(call(a, "PUT", "/kv/lock-wait-" + i, new byte[] {1}).statusCode()).isEqualTo(204);
    }
    String m2 = text(call(a, "GET", "/metrics", null));
    assertThat(sample(m2, "reconcile_store_write_lock_wait_seconds_count")).isEqualTo(puts + 3);
    assertThat(sample(m2, "reconcile_store_write_lock_wait_seconds_sum")).isNotNegative();
    // The key filter: three puts of new keys spared three reads; its memory at least 64 KiB.
    assertThat(sample(m2, "reconcile_store_key_filter_skipped_reads_total"))
        .isGreaterThanOrEqualTo(sample(m, "reconcile_store_key_filter_skipped_reads_total") + 3);
    assertThat(sample(m2, "reconcile_store_key_filter_bytes")).isGreaterThanOrEqualTo(64 << 10);
    assertThat(sample(m2, "reconcile_store_key_filter_false_positives_total")).isNotNegative();
    // a store of a few keys: its first segment, never grown nor rebuilt
    assertThat(sample(m2, "reconcile_store_key_filter_segments")).isEqualTo(1);
    assertThat(sample(m2, "reconcile_store_key_filter_rebuilds_total")).isZero();
    // a client's GET of a key never written: 404, answered by the filter (a stored key's is not)
    assertThat(call(a, "GET", "/kv/lock-wait-0", null).statusCode()).isEqualTo(200);
    assertThat(call(a, "GET", "/kv/never-written-key", null).statusCode()).isEqualTo(404);
    String m3 = text(call(a, "GET", "/metrics", null));
    assertThat(sample(m3, "reconcile_store_key_filter_denied_gets_total"))
        .isEqualTo(sample(m2, "reconcile_store_key_filter_denied_gets_total") + 1);
    // Coded-symbol upkeep: 5 000 new keys are 5 000 updates, applied by the upkeep thread or still
    // queued (no round read the symbols, and a writer applies only a full buffer of 1 024).
    double applied = sample(m, "reconcile_sketch_upkeep_applied_total");
    double pending = sample(m, "reconcile_sketch_upkeep_pending");
    assertThat(applied).isBetween(0.0, 5000.0);
    assertThat(pending).isBetween(0.0, 16.0 * 1024);
    assertThat(applied + pending).isLessThanOrEqualTo(5000.0);
    // direct-io is off by default (directIoSettingReachesTheStoreAndTheMetric turns it on).
    assertThat(sample(m, "reconcile_store_direct_io")).isEqualTo(0.0);
    // The 5 000 puts went through the WAL, under its bound (WalLimitTest).
    assertThat(sample(m, "reconcile_store_wal_bytes")).isPositive().isLessThan(256.0 * (1 << 20));
    for (String metric : AgentMetrics.ROCKSDB_PER_CF.values()) {
      for (String cf : dev.reconcile.agent.store.ReplicaStore.COLUMN_FAMILIES) {
        assertThat(sample(m, metric + "{cf=\"" + cf + "\"}")).as(metric + " " + cf).isNotNaN();
      }
    }
    for (String metric : AgentMetrics.ROCKSDB_PER_DB.values()) {
      assertThat(sample(m, metric)).as(metric).isNotNaN();
    }
  }

  /**
   * {@code repair-wal=false}: a round whose batches (a partition's 300 KiB to 1 MiB of 32 KiB
   * values) go both ways writes them without the WAL on each side, and each side flushes them when
   * the peer's stream ends, before the initiator's report: the memtables are empty when the round
   * returns, and the two counters say so. With the default, the same round writes none without the
   * WAL.
   */
  @ParameterizedTest(name = "repair-wal={0}")
  @ValueSource(booleans = {false, true})
  void largeRepairBatchesSkipTheWalOnlyWhenAskedAndAreFlushedByTheRoundsEnd(boolean repairWal)
      throws Exception {
    Map<String, String> set = Map.of("repair-wal", Boolean.toString(repairWal));
    ReplicaAgent c = cluster.start("c", set);
    ReplicaAgent d = cluster.start("d", set);
    byte[] value = new byte[32 << 10];
    new Random(53).nextBytes(value);
    for (int i = 0; i < 600; i++) {
      (i % 2 == 0 ? c : d).store().put(("w" + i).getBytes(StandardCharsets.UTF_8), value);
    }
    for (ReplicaAgent x : List.of(c, d)) {
      x.store().persistRepairs(); // nothing to flush yet: the puts went through the WAL
      assertThat(x.store().rocksProperty("records", "rocksdb.num-entries-active-mem-table"))
          .isEqualTo(300);
    }
    var real = call(c, "POST", "/repair?peer=127.0.0.1:" + d.peerPort(), null);
    assertThat(new JsonObject(text(real)).getBoolean("ok")).as(text(real)).isTrue();
    for (ReplicaAgent x : List.of(c, d)) {
      assertThat(x.store().recordCount()).isEqualTo(600);
      String m = text(call(x, "GET", "/metrics", null));
      double batches = sample(m, "reconcile_store_unlogged_repair_batches_total");
      double flushes = sample(m, "reconcile_store_unlogged_repair_flushes_total");
      long inMemtable = x.store().rocksProperty("records", "rocksdb.num-entries-active-mem-table");
      if (repairWal) {
        assertThat(batches).isZero();
        assertThat(flushes).isZero();
        assertThat(inMemtable).as("the WAL keeps them, nothing flushed").isEqualTo(600);
      } else {
        assertThat(batches).as(x.config().nodeId()).isGreaterThanOrEqualTo(1);
        assertThat(flushes).as(x.config().nodeId()).isEqualTo(1);
        assertThat(inMemtable).as("flushed before the round ended").isZero();
      }
    }
  }

  @Test
  void repairEndpointRunsARoundAndReportsIt() throws Exception {
    ReplicaAgent b = cluster.start("b", Map.of());
    for (int i = 0; i < 50; i++) {
      a.store()
          .put(("k" + i).getBytes(StandardCharsets.UTF_8), "v".getBytes(StandardCharsets.UTF_8));
    }
    var dry = call(a, "POST", "/repair?peer=127.0.0.1:" + b.peerPort() + "&dryRun=true", null);
    assertThat(dry.statusCode()).as(text(dry)).isEqualTo(200);
    assertThat(new JsonObject(text(dry)).getLong("wouldSend")).isEqualTo(50);
    assertThat(b.store().recordCount()).isZero();
    var real = call(a, "POST", "/repair?peer=127.0.0.1:" + b.peerPort(), null);
    JsonObject rep = new JsonObject(text(real));
    assertThat(rep.getBoolean("ok")).isTrue();
    assertThat(rep.getLong("recordsSent")).isEqualTo(50);
    assertThat(rep.getJsonObject("protocol").getInteger("roundTrips")).isBetween(1, 4);
    assertThat(b.store().recordCount()).isEqualTo(50);
    String metrics = text(call(a, "GET", "/metrics", null));
    assertThat(metrics).containsPattern("reconcile_records_total\\{direction=\"sent\"\\} 50\\.0");
    assertThat(call(a, "POST", "/repair?peer=nonsense", null).statusCode()).isEqualTo(400);
    var dead = call(a, "POST", "/repair?peer=127.0.0.1:1", null);
    assertThat(dead.statusCode()).isEqualTo(502);
    assertThat(new JsonObject(text(dead)).getString("error")).contains("cannot reach peer");
  }
}
