package dev.reconcile.cli.bench;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A CSV file of the bench written row by row (numbers and plain identifiers only: nothing needs
 * quoting), and {@link #read} for whoever checks one.
 */
public final class Csv implements AutoCloseable {
  private final BufferedWriter w;
  private final int columns;
  private final Path path;

  Csv(Path path, String... header) {
    this.path = path;
    this.columns = header.length;
    try {
      w = Files.newBufferedWriter(path, StandardCharsets.UTF_8);
      w.write(String.join(",", header));
      w.newLine();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + path + ": " + e.getMessage(), e);
    }
  }

  void row(Object... values) {
    if (values.length != columns) {
      throw new IllegalArgumentException(
          path + ": row of " + values.length + " values, header has " + columns);
    }
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < values.length; i++) {
      if (i > 0) {
        b.append(',');
      }
      Object v = values[i];
      b.append(v instanceof Double x ? number(x) : String.valueOf(v));
    }
    try {
      w.write(b.toString());
      w.newLine();
      w.flush();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + path + ": " + e.getMessage(), e);
    }
  }

  /**
   * The rows of a CSV file this class wrote, each a map from column name to value (an empty value
   * for a number that was NaN or infinite).
   *
   * @throws IllegalArgumentException naming the line when a row's column count differs from the
   *     header's
   */
  public static List<Map<String, String>> read(Path path) throws IOException {
    List<String> lines = Files.readAllLines(path, StandardCharsets.UTF_8);
    if (lines.isEmpty()) {
      throw new IllegalArgumentException(path + ": no header");
    }
    String[] header = lines.get(0).split(",", -1);
    List<Map<String, String>> rows = new ArrayList<>(lines.size() - 1);
    for (int i = 1; i < lines.size(); i++) {
      String[] v = lines.get(i).split(",", -1);
      if (v.length != header.length) {
        throw new IllegalArgumentException(
            path + ":" + (i + 1) + ": " + v.length + " values, header has " + header.length);
      }
      Map<String, String> row = new LinkedHashMap<>();
      for (int j = 0; j < header.length; j++) {
        row.put(header[j], v[j]);
      }
      rows.add(row);
    }
    return rows;
  }

  /** Integral values exactly, others with 6 significant digits, never in exponent form. */
  static String number(double x) {
    if (Double.isNaN(x) || Double.isInfinite(x)) {
      return "";
    }
    if (x == Math.rint(x) && Math.abs(x) < 1e15) {
      return Long.toString((long) x);
    }
    return new java.math.BigDecimal(x)
        .round(new java.math.MathContext(6))
        .stripTrailingZeros()
        .toPlainString();
  }

  @Override
  public void close() {
    try {
      w.close();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot close " + path + ": " + e.getMessage(), e);
    }
  }
}
