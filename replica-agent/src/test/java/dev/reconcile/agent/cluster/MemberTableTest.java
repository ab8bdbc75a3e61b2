package dev.reconcile.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.agent.HostPort;
import dev.reconcile.core.Fingerprint;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class MemberTableTest {
  private static MemberInfo entry(String member, String nodeId, String clusterId) {
    return new MemberInfo(
        member,
        nodeId,
        clusterId,
        new HostPort("127.0.0.1", 7400),
        new HostPort("127.0.0.1", 7401),
        false,
        PartitionDigest.of(4, p -> new Fingerprint(p, p, p)),
        10,
        1,
        1_700_000_000_000L);
  }

  private static JsonObject only(JsonArray departed) {
    assertThat(departed).hasSize(1);
    return departed.getJsonObject(0);
  }

  @Test
  void aMemberSeenOnlyInAReadLeavesWithItsNodeId() {
    // The departure of a member that no interval ever chose still names it (a CI failure: the
    // node id was learnt only when an interval listed candidates).
    MemberTable t = new MemberTable();
    t.named(Map.of("m2", entry("m2", "n2", "prod")), Set.of("m0", "m2"), "m0", "prod");
    assertThat(t.left("m2", 5)).isEqualTo("n2");
    JsonObject d = only(t.departed());
    assertThat(d.getString("member")).isEqualTo("m2");
    assertThat(d.getString("nodeId")).isEqualTo("n2");
    assertThat(d.getLong("leftAt")).isEqualTo(5);
  }

  @Test
  void theMemberListDroppingAMemberRecordsItBeforeTheLeaveEvent() {
    MemberTable t = new MemberTable();
    t.named(Map.of("m2", entry("m2", "n2", "prod")), Set.of("m0", "m2"), "m0", "prod");
    t.retain(Set.of("m0"), 7);
    assertThat(only(t.departed()).getString("nodeId")).isEqualTo("n2");
    // The late leave event neither duplicates the departure nor forgets the node id.
    assertThat(t.left("m2", 9)).isEqualTo("n2");
    assertThat(only(t.departed()).getLong("leftAt")).isEqualTo(7);
  }

  @Test
  void onlyLiveMembersOfThisClusterOtherThanSelfAreNamed() {
    MemberTable t = new MemberTable();
    t.named(
        Map.of(
            "m0", entry("m0", "self", "prod"),
            "m3", entry("m3", "stale", "prod"),
            "m4", entry("m4", "other", "staging")),
        Set.of("m0", "m4"),
        "m0",
        "prod");
    t.retain(Set.of(), 1);
    // Nothing named, so the member list emptying records no departures.
    assertThat(t.departed()).isEmpty();
    // A member that left before any read published nothing known: recorded without a node id.
    assertThat(t.left("m4", 2)).isNull();
    assertThat(only(t.departed()).getValue("nodeId")).isNull();
  }
}
