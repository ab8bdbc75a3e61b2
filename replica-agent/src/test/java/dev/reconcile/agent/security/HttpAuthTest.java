package dev.reconcile.agent.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.reconcile.agent.ReplicaAgent;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The HTTP API over TLS with bearer tokens: 401 without, 403 with the read token on writes, 200
 * with admin.
 */
class HttpAuthTest {
  @TempDir Path dir;
  private HttpClient client;
  private String base;

  private HttpResponse<String> call(String method, String path, String token) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(base + path))
            .timeout(Duration.ofSeconds(30))
            .method(
                method,
                method.equals("PUT")
                    ? HttpRequest.BodyPublishers.ofString("v")
                    : HttpRequest.BodyPublishers.noBody());
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void tokensAndTlsOnTheHttpPort() throws Exception {
    Path pki = dir.resolve("pki");
    Certs.Issued ca = Certs.ca(pki, "ca");
    Certs.Issued node = Certs.node(pki, ca, "a");
    Map<String, String> m = new HashMap<>();
    m.put("tls-cert", node.certPem().toString());
    m.put("tls-key", node.keyPem().toString());
    m.put("tls-ca", ca.certPem().toString());
    m.put("http-tls", "true");
    m.put("admin-token", "admin-secret-1");
    m.put("read-token", "read-secret-2");
    try (Agents c = new Agents(dir)) {
      ReplicaAgent a = c.start("a", m);
      client =
          HttpClient.newBuilder()
              .sslContext(Certs.context(ca, null))
              .connectTimeout(Duration.ofSeconds(10))
              .build();
      base = "https://127.0.0.1:" + a.httpPort();

      assertThat(call("GET", "/health", null).statusCode()).isEqualTo(200);
      // No token: 401 everywhere else, with a challenge.
      HttpResponse<String> none = call("GET", "/status", null);
      assertThat(none.statusCode()).isEqualTo(401);
      assertThat(none.headers().firstValue("WWW-Authenticate")).hasValue("Bearer");
      assertThat(call("GET", "/metrics", null).statusCode()).isEqualTo(401);
      assertThat(call("PUT", "/kv/k1", null).statusCode()).isEqualTo(401);
      // A wrong token: 403.
      assertThat(call("GET", "/status", "nope").statusCode()).isEqualTo(403);
      // Read token: reads yes, writes and repair no.
      assertThat(call("GET", "/status", "read-secret-2").statusCode()).isEqualTo(200);
      assertThat(call("GET", "/metrics", "read-secret-2").statusCode()).isEqualTo(200);
      assertThat(call("PUT", "/kv/k1", "read-secret-2").statusCode()).isEqualTo(403);
      assertThat(call("DELETE", "/kv/k1", "read-secret-2").statusCode()).isEqualTo(403);
      assertThat(call("POST", "/repair?peer=127.0.0.1:1", "read-secret-2").statusCode())
          .isEqualTo(403);
      assertThat(a.store().recordCount()).isZero();
      // Admin token: everything.
      assertThat(call("PUT", "/kv/k1", "admin-secret-1").statusCode()).isBetween(200, 204);
      assertThat(call("GET", "/kv/k1", "read-secret-2").body()).isEqualTo("v");
      assertThat(call("GET", "/selfcheck", "admin-secret-1").statusCode()).isEqualTo(200);
      assertThat(Agents.refusals(a, "http_unauthorized")).isEqualTo(7);

      // Plain HTTP on the TLS port gets no answer.
      HttpClient plain = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
      assertThatThrownBy(
              () ->
                  plain.send(
                      HttpRequest.newBuilder(
                              URI.create("http://127.0.0.1:" + a.httpPort() + "/health"))
                          .timeout(Duration.ofSeconds(3))
                          .build(),
                      HttpResponse.BodyHandlers.ofString()))
          .isInstanceOf(java.io.IOException.class);
    }
  }
}
