package dev.reconcile.agent;

import static dev.reconcile.agent.store.Fixtures.columnFamilies;
import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.core.Fingerprint;
import dev.reconcile.core.ReplicaRecord;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A store written by the last build of store format 1 ({@code d324965}: an agent with node id
 * {@code golden-v1} of cluster {@code golden}, default sketch parameters, 40 records {@code key-NN
 * -> value-NN} loaded by {@code POST /kv}, then {@code key-07} deleted) opens in this build: it is
 * migrated to format 2 with every record, and every partition's fingerprint is the one that build
 * served on {@code GET /status}.
 */
class StoreFormat1GoldenTest {
  /** {@code GET /status} of the format-1 build on this store: partition -> fingerprint. */
  private static final List<String> FINGERPRINTS =
      List.of(
          "d52912b1e30030f8",
          "2ed7b77b2386ca4",
          "545d7ded68963482",
          "56380a310a48dd0e",
          "95dd877992bdf07b",
          "562161bd94d5a55",
          "7677ea9673e7bdd6",
          "463489e0a0779635",
          "881ea8b4762adf9f",
          "3ff14bb4fd1324fb",
          "1ba46e92d4ac8a5f",
          "efda257a11cc887c",
          "72cc72fb734c81cb",
          "306711d7d46f2cb4",
          "c9b6f587099d83b8",
          "745ed16f856530b");

  @TempDir Path dir;

  @Test
  void aStoreOfTheFormat1BuildOpensWithEveryRecordAndItsFingerprints() throws Exception {
    Path data = dir.resolve("data");
    copyFixture(data);
    assertThat(columnFamilies(data)).contains("records").doesNotContain("records_by_partition");
    for (int open = 0; open < 2; open++) { // the migration, then an ordinary open of format 2
      try (LocalReplica r = LocalReplica.open(config(data))) {
        assertThat(r.recordCount()).as("open %d", open).isEqualTo(40);
        List<String> fps = new ArrayList<>();
        for (int p = 0; p < r.params().partitions(); p++) {
          Fingerprint f = r.sketches().fingerprint(p);
          fps.add(Long.toHexString(f.sum() ^ f.sum2()));
        }
        assertThat(fps).as("open %d", open).isEqualTo(FINGERPRINTS);
        List<ReplicaRecord> all = new ArrayList<>();
        r.forEachRecord(all::add);
        assertThat(all).hasSize(40);
        for (ReplicaRecord rec : all) {
          String key = new String(rec.key(), StandardCharsets.UTF_8);
          if (key.equals("key-07")) {
            assertThat(rec.tombstone()).isTrue();
          } else {
            assertThat(rec.tombstone()).as(key).isFalse();
            assertThat(new String(rec.value(), StandardCharsets.UTF_8))
                .isEqualTo(key.replace("key-", "value-"));
            assertThat(rec.origin()).isEqualTo(LocalReplica.origin("golden-v1"));
          }
        }
        assertThat(r.get("key-03".getBytes(StandardCharsets.UTF_8)).orElseThrow().value())
            .isEqualTo("value-03".getBytes(StandardCharsets.UTF_8));
        assertThat(r.passesSelfCheck()).as("open %d", open).isTrue();
      }
      assertThat(columnFamilies(data)).contains("records_by_partition").doesNotContain("records");
    }
  }

  private static AgentConfig config(Path data) {
    return AgentConfig.fromMap(
        Map.of(
            "node-id", "golden-v1",
            "cluster-id", "golden",
            "data", data.toString(),
            "peer-listen", "127.0.0.1:0",
            "http-listen", "127.0.0.1:0"));
  }

  /** Copies the fixture (RocksDB writes into the directory it opens). */
  private static void copyFixture(Path to) throws IOException, URISyntaxException {
    Path from =
        Path.of(
            Objects.requireNonNull(
                    StoreFormat1GoldenTest.class.getResource("/golden/store-format-1"),
                    "test resource golden/store-format-1")
                .toURI());
    Files.createDirectories(to);
    try (Stream<Path> files = Files.list(from)) {
      for (Path f : files.toList()) {
        Files.copy(f, to.resolve(f.getFileName()));
      }
    }
  }
}
