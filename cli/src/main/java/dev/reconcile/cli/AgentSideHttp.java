package dev.reconcile.cli;

import dev.reconcile.agent.HostPort;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * A client of one agent's HTTP API (docs/operations.md) for the {@code repair}, {@code status} and
 * live {@code diff} commands: JSON requests with an optional bearer token, every failure turned
 * into one {@link CliException} line naming the agent.
 */
final class AgentSideHttp {
  static final String PREFIX = "agent:";

  private final String label;
  private final HostPort address;
  private final String token;
  private final boolean https;
  private final HttpClient client;

  AgentSideHttp(
      String label, HostPort address, String token, boolean https, Duration connectTimeout) {
    this.label = label;
    this.address = address;
    this.token = token == null || token.isEmpty() ? null : token;
    this.https = https;
    this.client =
        HttpClient.newBuilder()
            .connectTimeout(connectTimeout)
            .version(HttpClient.Version.HTTP_1_1)
            .build();
  }

  /** Parses {@code agent:HOST:PORT} (or, with {@code prefixOptional}, plain {@code HOST:PORT}). */
  static HostPort parse(String text, boolean prefixOptional) {
    String rest;
    if (text.startsWith(PREFIX)) {
      rest = text.substring(PREFIX.length());
    } else if (prefixOptional) {
      rest = text;
    } else {
      throw new CliException(
          text + ": expected agent:HOST:PORT (the agent's HTTP address) or rocksdb:PATH");
    }
    HostPort hp;
    try {
      hp = HostPort.parse(rest);
    } catch (IllegalArgumentException e) {
      throw new CliException(
          text
              + ": expected "
              + (prefixOptional ? "" : PREFIX)
              + "HOST:PORT ("
              + e.getMessage()
              + ")");
    }
    if (hp.port() == 0) {
      throw new CliException(text + ": port 0 is not an address");
    }
    return hp;
  }

  String label() {
    return label;
  }

  HostPort address() {
    return address;
  }

  JsonObject getJson(String path, Duration timeout) {
    return json(
        send(request(path, timeout).GET().build(), HttpResponse.BodyHandlers.ofString()),
        path,
        false);
  }

  /**
   * POST with an empty body; a JSON answer with status 2xx, or (when {@code acceptError}) any JSON.
   */
  Response postJson(String path, Duration timeout) {
    HttpResponse<String> r =
        send(
            request(path, timeout).POST(HttpRequest.BodyPublishers.noBody()).build(),
            HttpResponse.BodyHandlers.ofString());
    return new Response(r.statusCode(), json(r, path, true));
  }

  /** A GET answered with a binary body (status 200), as a stream the caller closes. */
  InputStream getStream(String path, Duration timeout) {
    HttpResponse<InputStream> r =
        send(request(path, timeout).GET().build(), HttpResponse.BodyHandlers.ofInputStream());
    if (r.statusCode() != 200) {
      String body;
      try (InputStream in = r.body()) {
        body = new String(in.readNBytes(4096), StandardCharsets.UTF_8);
      } catch (IOException e) {
        body = "";
      }
      throw new CliException(
          label + ": GET " + path + " answered " + r.statusCode() + errorOf(body));
    }
    return r.body();
  }

  /** A GET answered with a binary body (status 200). */
  byte[] getBytes(String path, Duration timeout) {
    HttpResponse<byte[]> r =
        send(request(path, timeout).GET().build(), HttpResponse.BodyHandlers.ofByteArray());
    if (r.statusCode() == 401 || r.statusCode() == 403) {
      throw new CliException(
          label
              + ": "
              + path
              + " refused ("
              + r.statusCode()
              + errorOf(new String(r.body(), StandardCharsets.UTF_8))
              + "); pass --token");
    }
    if (r.statusCode() != 200) {
      throw new CliException(
          label
              + ": GET "
              + path
              + " answered "
              + r.statusCode()
              + errorOf(new String(r.body(), StandardCharsets.UTF_8)));
    }
    return r.body();
  }

  /** A POST of a binary body answered with a binary body (status 200), as a byte array. */
  byte[] postBytes(String path, byte[] body, Duration timeout) {
    HttpResponse<byte[]> r =
        send(
            request(path, timeout)
                .header("content-type", "application/octet-stream")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                .build(),
            HttpResponse.BodyHandlers.ofByteArray());
    if (r.statusCode() != 200) {
      throw new CliException(
          label
              + ": POST "
              + path
              + " answered "
              + r.statusCode()
              + errorOf(new String(r.body(), StandardCharsets.UTF_8)));
    }
    return r.body();
  }

  /** Status code and decoded JSON body. */
  record Response(int status, JsonObject body) {}

  private HttpRequest.Builder request(String path, Duration timeout) {
    HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).timeout(timeout);
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    return b;
  }

  private URI uri(String path) {
    return URI.create((https ? "https://" : "http://") + address + path);
  }

  static String query(String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8);
  }

  private <T> HttpResponse<T> send(HttpRequest req, HttpResponse.BodyHandler<T> handler) {
    try {
      return client.send(req, handler);
    } catch (HttpConnectTimeoutException e) {
      throw new CliException(label + ": cannot connect to " + address + " (timed out)");
    } catch (HttpTimeoutException e) {
      throw new CliException(label + ": no answer from " + address + " within the timeout");
    } catch (ConnectException e) {
      throw new CliException(
          label
              + ": cannot connect to "
              + address
              + " ("
              + (e.getMessage() == null ? "connection refused" : e.getMessage())
              + ")");
    } catch (IOException e) {
      throw new CliException(
          label + ": " + req.method() + " " + req.uri().getPath() + " failed: " + e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CliException(label + ": interrupted");
    }
  }

  private JsonObject json(HttpResponse<String> r, String path, boolean acceptError) {
    if (r.statusCode() == 401 || r.statusCode() == 403) {
      throw new CliException(
          label
              + ": "
              + path
              + " refused ("
              + r.statusCode()
              + errorOf(r.body())
              + "); pass --token");
    }
    if (!acceptError && r.statusCode() / 100 != 2) {
      throw new CliException(
          label + ": " + path + " answered " + r.statusCode() + errorOf(r.body()));
    }
    try {
      return new JsonObject(r.body());
    } catch (DecodeException | ClassCastException e) {
      throw new CliException(
          label
              + ": "
              + path
              + " answered "
              + r.statusCode()
              + " with a body that is not a JSON object (is "
              + address
              + " a reconcile agent's HTTP port?)");
    }
  }

  private static String errorOf(String body) {
    try {
      String e = new JsonObject(body).getString("error");
      return e == null ? "" : ": " + e.replace('\n', ' ');
    } catch (RuntimeException e) {
      return "";
    }
  }
}
