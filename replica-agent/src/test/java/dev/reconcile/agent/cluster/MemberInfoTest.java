package dev.reconcile.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.reconcile.agent.HostPort;
import dev.reconcile.core.Fingerprint;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

class MemberInfoTest {
  static final MemberInfo INFO =
      new MemberInfo(
          "m-1",
          "node-a",
          "prod",
          new HostPort("10.0.0.5", 7400),
          new HostPort("10.0.0.5", 7401),
          true,
          PartitionDigest.of(4, p -> new Fingerprint(p, p, p)),
          1234,
          7,
          1_700_000_000_000L);

  @Test
  void roundTrips() {
    assertThat(MemberInfo.parse("m-1", INFO.toJson())).isEqualTo(INFO);
    assertThat(INFO.toJson().length()).isLessThan(400);
  }

  @Test
  void hostileEntriesAreRefusedNamingTheField() {
    JsonObject j = new JsonObject(INFO.toJson());
    assertBad("m-1", 42, "is a Integer, not JSON");
    assertBad("m-1", null, "is a null");
    assertBad("m-1", "x".repeat(3000), "max 2048");
    assertBad("m-1", "[1,2]", "not a JSON object");
    assertBad("m-2", INFO.toJson(), "entry for member m-1 under key m-2");
    assertBad("m-1", j.copy().put("v", 2).encode(), "entry version 2");
    assertBad("m-1", j.copy().put("nodeId", "<script>").encode(), "nodeId is not");
    assertBad("m-1", j.copy().remove("peer") == null ? "" : without(j, "peer"), "without peer");
    assertBad("m-1", j.copy().put("peer", "nohost").encode(), "is not HOST:PORT");
    assertBad("m-1", j.copy().put("http", "h:70000").encode(), "port 70000");
    assertBad("m-1", j.copy().put("records", -1).encode(), "records missing or negative");
    assertBad("m-1", j.copy().put("seq", "many").encode(), "wrong type");
    assertBad("m-1", j.copy().put("digest", "AQ").encode(), "truncated");
    assertBad("m-1", j.copy().put("clusterId", "c".repeat(300)).encode(), "longer than 256");
  }

  static String without(JsonObject j, String field) {
    JsonObject c = j.copy();
    c.remove(field);
    return c.encode();
  }

  static void assertBad(String key, Object raw, String message) {
    assertThatThrownBy(() -> MemberInfo.parse(key, raw))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(message);
  }
}
