package dev.reconcile.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LocalReplicaTest {
  @TempDir Path dir;

  private AgentConfig config(String node) {
    return AgentConfig.fromMap(
        Map.of("node-id", node, "cluster-id", "t", "data", dir.resolve("data").toString()));
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void aReadOnlyOpenReadsAStoreThatIsOpenForWritingAndRefusesWrites() {
    try (LocalReplica writer = LocalReplica.open(config("a"))) {
      writer.put(bytes("k1"), bytes("v1"));
      writer.put(bytes("k2"), bytes("v2"));
      try (LocalReplica reader = LocalReplica.openReadOnly(config("a"))) {
        assertThat(reader.recordCount()).isEqualTo(2);
        assertThat(reader.get(bytes("k1")))
            .get()
            .satisfies(r -> assertThat(r.value()).isEqualTo(bytes("v1")));
        assertThatThrownBy(() -> reader.put(bytes("k3"), bytes("v3")))
            .hasMessageContaining("read-only");
        // What the writer adds later is not in the read-only view.
        writer.put(bytes("k4"), bytes("v4"));
        assertThat(reader.get(bytes("k4"))).isEmpty();
      }
      assertThat(writer.get(bytes("k4"))).isPresent();
    }
  }

  @Test
  void aReadOnlyOpenNeedsAStoreMadeWithTheSameSeed() {
    assertThatThrownBy(() -> LocalReplica.openReadOnly(config("a")))
        .hasMessageContaining("no store at");
    try (LocalReplica writer = LocalReplica.open(config("a"))) {
      writer.put(bytes("k"), bytes("v"));
    }
    Map<String, String> otherSeed =
        Map.of(
            "node-id",
            "a",
            "cluster-id",
            "t",
            "hash-seed",
            "another cluster secret",
            "data",
            dir.resolve("data").toString());
    assertThatThrownBy(() -> LocalReplica.openReadOnly(AgentConfig.fromMap(otherSeed)))
        .hasMessageContaining("seed fingerprint");
  }
}
