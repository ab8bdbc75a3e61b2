package dev.reconcile.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

class StatusCommandTest {
  @Test
  void refusedRecordsAndPartialRepairsAreShownToTheOperator() {
    JsonObject round =
        new JsonObject()
            .put("ok", true)
            .put("at", 1_750_000_000_000L)
            .put("durationMillis", 12)
            .put("difference", 30)
            .put("estimatedDifference", 30)
            .put("recordsSent", 0)
            .put("recordsReceived", 25)
            .put("stillDiffering", new JsonArray().add(3))
            .put("partialPartitions", 1)
            .put("clockSkewRefused", 5)
            .put("clockSkewKeys", new JsonArray().add("future0").add("future1"));
    JsonObject status =
        new JsonObject()
            .put("nodeId", "b")
            .put("clusterId", "c")
            .put("records", 100)
            .put("partitions", new JsonArray())
            .put("lastRounds", new JsonObject().put("from 127.0.0.1:5000", round));
    StringWriter w = new StringWriter();
    StatusCommand.print(new PrintWriter(w), status, false);
    assertThat(w.toString())
        .contains("partitions still differing [3]")
        .contains("5 record(s) refused")
        .contains("[\"future0\",\"future1\"]")
        .contains("1 partition(s) repaired in part");
  }
}
