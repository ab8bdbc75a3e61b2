package dev.reconcile.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * Writes the differing keys in one of three formats, streaming (no list of results in memory).
 *
 * <ul>
 *   <li>text: {@code < KEY}, {@code > KEY}, {@code ! KEY}, the key escaped by {@link KeyEscaper};
 *   <li>json: one document {@code {"left":..,"right":..,"differences":[{"side":..,"key":..,
 *       "key_b64":..},..],"counts":{..}}};
 *   <li>ndjson: one {@code {"side":..,"key":..,"key_b64":..}} object per line.
 * </ul>
 *
 * {@code side} is {@code left} (only on the left), {@code right} (only on the right) or {@code
 * both} (different values). {@code key} is the key decoded as UTF-8 (invalid bytes become U+FFFD);
 * {@code key_b64} is the exact key bytes in standard base64.
 */
abstract class DiffWriter {
  /** Output format of {@code diff}. */
  enum Format {
    text,
    json,
    ndjson
  }

  static final char LEFT = '<';
  static final char RIGHT = '>';
  static final char BOTH = '!';

  abstract void entry(char kind, KeyList keys, int i);

  abstract void finish(long left, long right, long both);

  static DiffWriter of(Format f, PrintWriter out, String left, String right) {
    return switch (f) {
      case text -> new Text(out);
      case json -> new Json(out, left, right, true);
      case ndjson -> new Json(out, left, right, false);
    };
  }

  static String side(char kind) {
    return kind == LEFT ? "left" : kind == RIGHT ? "right" : "both";
  }

  private static final class Text extends DiffWriter {
    private final PrintWriter out;
    private final StringBuilder sb = new StringBuilder(256);

    Text(PrintWriter out) {
      this.out = out;
    }

    @Override
    void entry(char kind, KeyList keys, int i) {
      sb.setLength(0);
      sb.append(kind).append(' ');
      KeyEscaper.escape(keys.chunk(i), keys.offset(i), keys.length(i), sb);
      sb.append('\n');
      out.append(sb);
    }

    @Override
    void finish(long left, long right, long both) {
      out.flush();
    }
  }

  private static final class Json extends DiffWriter {
    private final PrintWriter out;
    private final JsonGenerator g;
    private final boolean document;
    private final Base64.Encoder b64 = Base64.getEncoder();

    Json(PrintWriter out, String left, String right, boolean document) {
      this.out = out;
      this.document = document;
      try {
        g = new JsonFactory().createGenerator(out).disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
        g.setRootValueSeparator(null); // ndjson: the newline is written by hand
        if (document) {
          g.writeStartObject();
          g.writeStringField("left", left);
          g.writeStringField("right", right);
          g.writeArrayFieldStart("differences");
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    @Override
    void entry(char kind, KeyList keys, int i) {
      try {
        g.writeStartObject();
        g.writeStringField("side", side(kind));
        g.writeStringField(
            "key",
            new String(keys.chunk(i), keys.offset(i), keys.length(i), StandardCharsets.UTF_8));
        g.writeFieldName("key_b64");
        g.writeString(b64.encodeToString(keys.key(i)));
        g.writeEndObject();
        if (!document) {
          g.flush();
          out.write('\n');
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    @Override
    void finish(long left, long right, long both) {
      try {
        if (document) {
          g.writeEndArray();
          g.writeObjectFieldStart("counts");
          g.writeNumberField("left", left);
          g.writeNumberField("right", right);
          g.writeNumberField("both", both);
          g.writeEndObject();
          g.writeBooleanField("identical", left + right + both == 0);
          g.writeEndObject();
        }
        g.flush();
        if (document) {
          out.write('\n');
        }
        out.flush();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
