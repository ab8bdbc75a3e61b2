package dev.reconcile.agent.fuzz;

import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.reconcile.agent.AgentConfig;
import dev.reconcile.core.fuzz.FuzzLoop;
import dev.reconcile.core.fuzz.Mutator;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Fuzzing of {@link AgentConfig#load} on mutated YAML and JSON files: byte mutations, and values
 * replaced by hostile ones (huge numbers, negative sizes, nested structures, YAML anchors and
 * tags). The documented rejection is {@link AgentConfig.ConfigException} with a message; nothing
 * else may escape.
 */
class AgentConfigFuzzTest {
  private static final int N =
      800 * Math.min(20, Mutator.scale()); // one file write and YAML parse each: capped
  private static final String YAML =
      """
      node-id: a
      cluster-id: prod
      data: /var/lib/reconcile
      peer-listen: 127.0.0.1:7400
      http-listen: 127.0.0.1:7401
      peers: [127.0.0.1:7410, "127.0.0.1:7420"]
      repair-interval: 30s
      repair-jitter: 0.2
      max-sessions: 2
      hash-seed: s3cret
      partitions-log2: 4
      iblt-max-log2: 15
      tombstone-grace: 7d
      rate-limit: 10MiB
      batch-records: 1000
      batch-bytes: 1MiB
      max-frame-bytes: 16MiB
      idle-timeout: 30s
      session-timeout: 10m
      max-sessions-per-peer: 1
      max-session-bytes: 16GiB
      max-clock-skew: 1h
      admin-token: t
      """;
  private static final String JSON =
      "{\"node-id\": \"b\", \"peers\": [\"127.0.0.1:1\"], \"max-sessions\": 3, \"repair-jitter\": 0.5,"
          + " \"batch-bytes\": \"512KiB\", \"idle-timeout\": \"5s\", \"allow-plaintext\": true}";
  private static final String[] HOSTILE = {
    "-1",
    "0",
    "99999999999999999999999",
    "1e309",
    "NaN",
    "-0.0",
    "''",
    "~",
    "[1, [2, [3]]]",
    "{a: b}",
    "&x [*x]",
    "!!binary AAAA",
    "!!java.io.File /tmp",
    "9223372036854775807GiB",
    "1ms",
    "-5s",
    "5y",
    "\"\\u0000\"",
    "0.0.0.0:7400",
    "[::1]:7400",
    "256.1.1.1:99999",
    "true",
    "*undefined",
    "\"" + "x".repeat(5000) + "\"",
  };

  @TempDir static Path dir;

  static boolean one(SplittableRandom r) throws Exception {
    String text = r.nextBoolean() ? YAML : JSON;
    byte[] in;
    if (r.nextInt(3) == 0) {
      String[] lines = text.split("\n", -1);
      int i = r.nextInt(lines.length);
      int colon = lines[i].indexOf(':');
      if (colon > 0) {
        lines[i] = lines[i].substring(0, colon + 1) + " " + HOSTILE[r.nextInt(HOSTILE.length)];
      }
      in = String.join("\n", lines).getBytes(StandardCharsets.UTF_8);
    } else {
      in = Mutator.mutateBytes(text.getBytes(StandardCharsets.UTF_8), r);
    }
    Path f = dir.resolve("agent.yaml");
    Files.write(f, in);
    try {
      AgentConfig.load(f, Map.of("node-id", "x"));
      return true;
    } catch (AgentConfig.ConfigException e) {
      FuzzLoop.clearMessage("AgentConfig.load", e);
      return false;
    }
  }

  @Test
  void configLoaderSurvivesMutatedFiles() {
    assertTimeoutPreemptively(
        Duration.ofSeconds(120L * Mutator.scale()),
        () -> FuzzLoop.run("AgentConfig.load", 13, N, AgentConfigFuzzTest::one));
  }

  /** Regression seeds (a failing seed from the loop above goes here). */
  @ParameterizedTest
  @ValueSource(
      longs = {
        0L,
        635340061525167726L /* size 99999999999999999999999: NumberFormatException escaped */
      })
  void regressions(long seed) {
    FuzzLoop.one("AgentConfig.load", seed, AgentConfigFuzzTest::one);
  }
}
