package dev.reconcile.agent.security;

import static dev.reconcile.agent.security.Agents.assertConverged;
import static dev.reconcile.agent.security.Agents.load;
import static dev.reconcile.agent.security.Agents.repair;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.reconcile.agent.ReplicaAgent;
import dev.reconcile.agent.RoundReport;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The openssl commands of docs/security.md make certificates the agents accept (skipped without
 * openssl).
 */
class OpensslCertificatesTest {
  @TempDir Path dir;

  private int sh(String script) throws Exception {
    Process p =
        new ProcessBuilder("bash", "-c", script)
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .start();
    String out =
        new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      return -1;
    }
    if (p.exitValue() != 0) {
      System.err.println(out);
    }
    return p.exitValue();
  }

  @Test
  void agentsConvergeWithCertificatesMadeByTheDocumentedCommands() throws Exception {
    assumeTrue(sh("command -v openssl") == 0, "openssl not installed");
    // Verbatim from docs/security.md (node names and SAN adapted to loopback).
    String script =
        """
        set -e
        openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \\
          -subj "/CN=reconcile cluster CA" -keyout ca.key -out ca.crt \\
          -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
        for n in a b; do
          openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \\
            -subj "/CN=$n" -keyout node-$n.key -out node-$n.csr
          printf "basicConstraints=CA:FALSE\\nkeyUsage=critical,digitalSignature,keyAgreement\\nextendedKeyUsage=serverAuth,clientAuth\\nsubjectAltName=IP:127.0.0.1,DNS:localhost\\n" > node-$n.ext
          openssl x509 -req -in node-$n.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 825 \\
            -extfile node-$n.ext -out node-$n.crt
          chmod 600 node-$n.key
        done
        openssl verify -CAfile ca.crt node-a.crt node-b.crt
        """;
    assertThat(sh(script)).isZero();
    try (Agents c = new Agents(dir)) {
      ReplicaAgent a = c.start("a", tls("a"));
      ReplicaAgent b = c.start("b", tls("b"));
      load(a, "k", 100, 20);
      RoundReport r = repair(a, b);
      assertThat(r.ok).as(r.error).isTrue();
      assertConverged(a, b);
    }
  }

  private Map<String, String> tls(String n) {
    return Map.of(
        "tls-cert", dir.resolve("node-" + n + ".crt").toString(),
        "tls-key", dir.resolve("node-" + n + ".key").toString(),
        "tls-ca", dir.resolve("ca.crt").toString());
  }
}
