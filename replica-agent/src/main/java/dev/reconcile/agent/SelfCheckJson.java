package dev.reconcile.agent;

import dev.reconcile.agent.store.SelfCheck;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/** {@link SelfCheck} as JSON for {@code GET /selfcheck}. */
final class SelfCheckJson {
  private SelfCheckJson() {}

  static JsonObject of(SelfCheck c) {
    JsonArray bad = new JsonArray();
    for (SelfCheck.PartitionCheck p : c.partitions()) {
      if (!p.ok()) {
        bad.add(
            new JsonObject()
                .put("partition", p.partition())
                .put("elements", p.elements())
                .put("mismatch", p.mismatch()));
      }
    }
    return new JsonObject()
        .put("ok", c.ok())
        .put("partitions", c.partitions().size())
        .put("mismatchedPartitions", bad)
        .put("records", c.records())
        .put("indexEntries", c.indexEntries())
        .put("corruptRecords", c.corruptRecords())
        .put("problems", new JsonArray(c.problems()))
        .put("elapsedMillis", c.elapsed().toMillis());
  }
}
