package dev.reconcile.cli;

import java.nio.file.Path;
import java.util.regex.Pattern;

/**
 * The syntax of a side argument, parsed before anything is opened.
 *
 * <ul>
 *   <li>{@code file:PATH}: text, one record per line ({@link FileSource});
 *   <li>{@code rocksdb:PATH}: a plain key-value RocksDB directory, opened read-only ({@link
 *       RocksDbSource}).
 * </ul>
 *
 * <p>Extension point: {@code agent:PATH} (a reconcile agent's data directory) and {@code HOST:PORT}
 * (a live agent) are recognised and refused as "not supported yet"; to add one, give it a {@link
 * Kind} and a {@link Side} implementation and return it from {@link #open}.
 */
record SideSpec(Kind kind, String location, String text) {
  /** Kinds of side. */
  enum Kind {
    FILE,
    ROCKSDB
  }

  private static final Pattern HOST_PORT =
      Pattern.compile("(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9][A-Za-z0-9.-]*):[0-9]{1,5}");

  static SideSpec parse(String text) {
    if (text.startsWith("file:")) {
      return new SideSpec(Kind.FILE, nonEmpty(text, text.substring(5)), text);
    }
    if (text.startsWith("rocksdb:")) {
      return new SideSpec(Kind.ROCKSDB, nonEmpty(text, text.substring(8)), text);
    }
    if (text.startsWith("agent:")) {
      throw new CliException(text + ": agent data directories are not supported yet");
    }
    if (HOST_PORT.matcher(text).matches()) {
      throw new CliException(text + ": live agents (HOST:PORT) are not supported yet");
    }
    throw new CliException(
        text + ": unknown side (expected file:PATH or rocksdb:PATH"
            + (text.indexOf(':') < 0 ? "; did you mean file:" + text + "?)" : ")"));
  }

  private static String nonEmpty(String text, String loc) {
    if (loc.isEmpty()) {
      throw new CliException(text + ": empty path");
    }
    return loc;
  }

  /** Opens the side; nothing is read until its sketches are asked for. */
  Side open(InputOptions options, Progress progress, java.util.function.Consumer<String> warn) {
    RecordSource source =
        switch (kind) {
          case FILE -> new FileSource(text, Path.of(location), options.stripTrailingCr);
          case ROCKSDB -> new RocksDbSource(text, Path.of(location));
        };
    return new RecordSide(text, source, progress, warn);
  }
}
