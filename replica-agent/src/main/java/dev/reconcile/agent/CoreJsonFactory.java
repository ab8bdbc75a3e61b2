package dev.reconcile.agent;

import io.vertx.core.json.jackson.JacksonCodec;
import io.vertx.core.spi.JsonFactory;
import io.vertx.core.spi.json.JsonCodec;

/**
 * Vert.x's JSON codec on jackson-core alone, registered through {@code
 * META-INF/services/io.vertx.core.spi.JsonFactory}.
 *
 * <p>Without a registered factory, Vert.x uses its databind codec whenever jackson-databind is on
 * the class path (the agent has it for YAML configuration): that codec builds two {@code
 * ObjectMapper}s on first use, about 440 classes, which cost an agent's first JSON response about
 * 0.3 s on the reference machine (the report of the first round a new replica runs). The agent's
 * JSON is {@code JsonObject}s and {@code JsonArray}s of strings, numbers and booleans, which the
 * core codec encodes and decodes alike; it maps no Java objects.
 */
public final class CoreJsonFactory implements JsonFactory {
  private static final JsonCodec CODEC = new JacksonCodec();

  @Override
  public int order() {
    return 0;
  }

  @Override
  public JsonCodec codec() {
    return CODEC;
  }
}
