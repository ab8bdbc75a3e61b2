package dev.reconcile.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.json.jackson.DatabindCodec;
import io.vertx.core.json.jackson.JacksonCodec;
import org.junit.jupiter.api.Test;

/** The agent's JSON goes through the core codec, and what it serves survives it. */
class CoreJsonFactoryTest {
  @Test
  void vertxUsesTheCoreCodecThoughDatabindIsOnTheClassPath() throws Exception {
    Class.forName("com.fasterxml.jackson.databind.ObjectMapper"); // present (YAML configuration)
    assertThat(Json.CODEC).isInstanceOf(JacksonCodec.class).isNotInstanceOf(DatabindCodec.class);
  }

  @Test
  void aRoundReportEncodesAndDecodesUnchanged() {
    RoundReport r = new RoundReport();
    r.peer = "127.0.0.1:7000";
    r.ok = false;
    r.error = "connection lost";
    r.durationMillis = 1234;
    r.recordsReceived = 200_000;
    r.recordBytesReceived = 20_000_000_000L;
    r.stillDiffering.add(3);
    r.clockSkewKeys.add("k%20one");
    JsonObject json = r.toJson();
    JsonObject back = new JsonObject(json.encodePrettily());
    assertThat(back).isEqualTo(new JsonObject(json.encode()));
    assertThat(back.getString("error")).isEqualTo("connection lost");
    assertThat(back.getLong("recordBytesReceived")).isEqualTo(20_000_000_000L);
    assertThat(back.getJsonArray("stillDiffering")).isEqualTo(new JsonArray().add(3));
    assertThat(back.getValue("ok")).isEqualTo(false);
  }
}
