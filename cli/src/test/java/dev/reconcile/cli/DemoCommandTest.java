package dev.reconcile.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.cli.Cli.Result;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code reconcile demo} runs to completion at a small size and proves the replicas match, the new
 * replica that catches up included.
 */
class DemoCommandTest {
  @TempDir Path dir;

  @Test
  void demoConvergesAtASmallSize() {
    Result r =
        Cli.run(
            "demo",
            "--dir",
            dir.resolve("demo").toString(),
            "--keys",
            "20000",
            "--diff-percent",
            "2");
    assertThat(r.status()).as(r.err()).isZero();
    assertThat(r.out())
        .contains("20,000 records each")
        .contains("round: 16 partitions")
        .contains("replicas MATCH");
    assertThat(r.out()).containsPattern("estimated difference [0-9,]+, actual [0-9,]+");
    // The new replica receives every record of b, each partition streamed whole, and matches it.
    java.util.regex.Matcher each =
        java.util.regex.Pattern.compile("replicas MATCH: ([0-9,]+) records each").matcher(r.out());
    assertThat(each.find()).as(r.out()).isTrue();
    assertThat(r.out())
        .contains(
            "new replica c: caught up from b, "
                + each.group(1)
                + " records received (16 of 16 partitions whole)")
        .contains("c MATCHES b");
    // Protocol bytes are the session's without the record batches, and the rateless mode's coded
    // symbols are part of them.
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile(
                "protocol bytes: ([0-9,]+) \\(coded symbols ([0-9,]+),.*; ([0-9,]+) with the record"
                    + " batches")
            .matcher(r.out());
    assertThat(m.find()).as(r.out()).isTrue();
    long protocol = Long.parseLong(m.group(1).replace(",", ""));
    long symbols = Long.parseLong(m.group(2).replace(",", ""));
    long all = Long.parseLong(m.group(3).replace(",", ""));
    assertThat(symbols).isPositive().isLessThan(protocol);
    assertThat(protocol).isLessThan(all);
  }

  @Test
  void badDemoSizesAreTrouble() {
    Result r = Cli.run("demo", "--dir", dir.resolve("demo").toString(), "--keys", "0");
    assertThat(r.status()).isEqualTo(2);
    assertThat(r.errLines()).hasSize(1);
  }
}
