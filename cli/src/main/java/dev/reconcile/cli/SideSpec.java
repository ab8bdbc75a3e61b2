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
 *   <li>{@code HOST:PORT} or {@code agent:HOST:PORT}: a live agent's HTTP address ({@link
 *       AgentSide}): its read-only sketch endpoints serve the session, so only sketches and the
 *       differing records cross the network (docs/decisions.md says why not the peer port). A
 *       bearer token is taken from {@code RECONCILE_TOKEN}.
 * </ul>
 */
record SideSpec(Kind kind, String location, String text) {
  /** Kinds of side. */
  enum Kind {
    FILE,
    ROCKSDB,
    AGENT
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
    String agent = text.startsWith("agent:") ? text.substring(6) : text;
    if (HOST_PORT.matcher(agent).matches()) {
      return new SideSpec(Kind.AGENT, agent, text);
    }
    if (text.startsWith("agent:")) {
      throw new CliException(text + ": expected agent:HOST:PORT (the agent's HTTP address)");
    }
    throw new CliException(
        text
            + ": unknown side (expected file:PATH, rocksdb:PATH or HOST:PORT of an agent"
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
    if (kind == Kind.AGENT) {
      return new AgentSide(
          "agent:" + location, System.getenv("RECONCILE_TOKEN"), java.time.Duration.ofSeconds(60));
    }
    RecordSource source =
        switch (kind) {
          case FILE -> new FileSource(text, Path.of(location), options.stripTrailingCr);
          case ROCKSDB -> new RocksDbSource(text, Path.of(location));
          case AGENT -> throw new IllegalStateException("agent sides are opened above");
        };
    return new RecordSide(text, source, progress, warn);
  }
}
