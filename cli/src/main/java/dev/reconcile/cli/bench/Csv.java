package dev.reconcile.cli.bench;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** A CSV file written row by row (numbers and plain identifiers only: nothing needs quoting). */
final class Csv implements AutoCloseable {
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
