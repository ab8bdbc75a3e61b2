package dev.reconcile.cli.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CsvTest {
  @TempDir Path dir;

  @Test
  void readGivesBackWhatWasWrittenColumnByColumn() throws Exception {
    Path p = dir.resolve("t.csv");
    try (Csv csv = new Csv(p, "records", "rate", "label", "correct")) {
      csv.row(200_000, 104_955.123456, "store-ingest", true);
      csv.row(3, Double.NaN, "x", false);
    }
    List<Map<String, String>> rows = Csv.read(p);
    assertThat(rows).hasSize(2);
    assertThat(rows.get(0))
        .containsExactly(
            Map.entry("records", "200000"),
            Map.entry("rate", "104955"),
            Map.entry("label", "store-ingest"),
            Map.entry("correct", "true"));
    assertThat(rows.get(1)).containsEntry("rate", "").containsEntry("correct", "false");
  }

  @Test
  void aRowWithTheWrongNumberOfValuesNamesItsLine() throws Exception {
    Path p = dir.resolve("bad.csv");
    Files.writeString(p, "a,b\n1,2\n3\n", StandardCharsets.UTF_8);
    assertThatThrownBy(() -> Csv.read(p))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("bad.csv:3: 1 values, header has 2");
    Path empty = dir.resolve("empty.csv");
    Files.writeString(empty, "", StandardCharsets.UTF_8);
    assertThatThrownBy(() -> Csv.read(empty)).hasMessageContaining("no header");
  }

  @Test
  void aRowOfTheWrongWidthIsNotWritten() {
    Path p = dir.resolve("w.csv");
    try (Csv csv = new Csv(p, "a", "b")) {
      assertThatThrownBy(() -> csv.row(1))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("row of 1 values, header has 2");
    }
  }
}
