package dev.reconcile.cli.replay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.reconcile.agent.AgentConfig;
import dev.reconcile.agent.Durations;
import dev.reconcile.cli.replay.Scenario.Await;
import dev.reconcile.cli.replay.Scenario.Background;
import dev.reconcile.cli.replay.Scenario.Event;
import dev.reconcile.cli.replay.Scenario.Expect;
import dev.reconcile.cli.replay.Scenario.Generate;
import dev.reconcile.cli.replay.Scenario.Initial;
import dev.reconcile.cli.replay.Scenario.Keys;
import dev.reconcile.cli.replay.Scenario.Lifecycle;
import dev.reconcile.cli.replay.Scenario.LinkFault;
import dev.reconcile.cli.replay.Scenario.Repair;
import dev.reconcile.cli.replay.Scenario.Size;
import dev.reconcile.cli.replay.Scenario.Sleep;
import dev.reconcile.cli.replay.Scenario.WaitBytes;
import dev.reconcile.cli.replay.Scenario.Write;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads a scenario file (YAML, format in docs/replay.md) and validates every field. Every error is
 * a {@link ScenarioException} whose message starts with the file and names the field, e.g. {@code
 * scenario x.yaml: timeline[3].write.count: expected a positive integer, got "ten"}.
 */
public final class ScenarioParser {
  private static final Set<String> VIA = Set.of("ring", "star", "all");

  private final Path file;

  private ScenarioParser(Path file) {
    this.file = file;
  }

  public static Scenario parse(Path file) {
    if (!Files.isRegularFile(file)) {
      throw new ScenarioException("scenario " + file + ": no such file");
    }
    JsonNode root;
    try {
      root = new ObjectMapper(new YAMLFactory()).readTree(file.toFile());
    } catch (IOException e) {
      throw new ScenarioException(
          "scenario " + file + ": not valid YAML: " + e.getMessage().split("\n")[0], e);
    }
    return new ScenarioParser(file).scenario(root);
  }

  private ScenarioException fail(String field, String problem) {
    return new ScenarioException("scenario " + file + ": " + field + ": " + problem);
  }

  private Scenario scenario(JsonNode root) {
    if (root == null || !root.isObject()) {
      throw new ScenarioException(
          "scenario " + file + ": must be a mapping with replicas, initial, timeline and expect");
    }
    only(
        root,
        "",
        "name",
        "description",
        "replicas",
        "config",
        "initial",
        "background",
        "timeline",
        "expect");
    String fallbackName = file.getFileName().toString().replaceFirst("\\.ya?ml$", "");
    String name = root.has("name") ? text(root.get("name"), "name") : fallbackName;
    String description =
        root.has("description") ? text(root.get("description"), "description") : "";

    JsonNode reps = root.get("replicas");
    if (reps == null) {
      throw fail("replicas", "missing (a list of names, or a mapping name -> {config: {...}})");
    }
    Map<String, Map<String, String>> replicas = new LinkedHashMap<>();
    if (reps.isArray()) {
      for (int i = 0; i < reps.size(); i++) {
        replicas.put(replicaName(reps.get(i), "replicas[" + i + "]"), Map.of());
      }
    } else if (reps.isObject()) {
      for (Iterator<Map.Entry<String, JsonNode>> it = reps.properties().iterator();
          it.hasNext(); ) {
        var e = it.next();
        String f = "replicas." + e.getKey();
        replicaName(new com.fasterxml.jackson.databind.node.TextNode(e.getKey()), f);
        JsonNode v = e.getValue();
        Map<String, String> cfg = Map.of();
        if (v != null && !v.isNull()) {
          if (!v.isObject()) {
            throw fail(f, "expected a mapping such as {config: {clock-offset: 5s}}");
          }
          only(v, f, "config");
          cfg = config(v.get("config"), f + ".config");
        }
        replicas.put(e.getKey(), cfg);
      }
    } else {
      throw fail("replicas", "expected a list of names or a mapping");
    }
    if (replicas.size() < 2 || replicas.size() > 16) {
      throw fail("replicas", "a scenario needs 2 to 16 replicas, got " + replicas.size());
    }
    Map<String, String> config = config(root.get("config"), "config");
    Initial initial = initial(root.get("initial"), replicas.keySet());
    Background background = null;
    if (root.has("background")) {
      JsonNode b = object(root.get("background"), "background");
      only(b, "background", "interval", "via");
      background =
          new Background(
              duration(required(b, "interval", "background"), "background.interval"),
              b.has("via") ? oneOf(b.get("via"), "background.via", VIA) : "all");
      if (background.interval().isZero()) {
        throw fail("background.interval", "must be positive");
      }
    }
    List<Event> timeline = new ArrayList<>();
    JsonNode tl = root.get("timeline");
    if (tl != null && !tl.isNull()) {
      if (!tl.isArray()) {
        throw fail("timeline", "expected a list of events");
      }
      for (int i = 0; i < tl.size(); i++) {
        timeline.add(event(i, tl.get(i), replicas.keySet()));
      }
    }
    Expect expect = expect(root.get("expect"), replicas.keySet());
    Scenario sc =
        new Scenario(
            file,
            name,
            description,
            replicas,
            config,
            initial,
            background,
            List.copyOf(timeline),
            expect);
    for (String r : replicas.keySet()) {
      try {
        AgentConfig.fromMap(ScenarioRunner.agentConfig(sc, r, Path.of("data")));
        ScenarioRunner.hooks(sc, r);
      } catch (AgentConfig.ConfigException | IllegalArgumentException e) {
        throw fail(
            replicas.get(r).isEmpty() ? "config" : "replicas." + r + ".config", e.getMessage());
      }
    }
    return sc;
  }

  // ------------------------------------------------------------------ sections

  private Map<String, String> config(JsonNode n, String f) {
    Map<String, String> out = new LinkedHashMap<>();
    if (n == null || n.isNull()) {
      return out;
    }
    object(n, f);
    for (Iterator<Map.Entry<String, JsonNode>> it = n.properties().iterator(); it.hasNext(); ) {
      var e = it.next();
      String k = e.getKey();
      if (!AgentConfig.DEFAULTS.containsKey(k) && !TestHookKeys.KEYS.contains(k)) {
        throw fail(
            f + "." + k,
            "not an agent config key nor a test hook (see docs/operations.md and docs/replay.md)");
      }
      if (Set.of("node-id", "data", "peer-listen", "http-listen", "peers").contains(k)) {
        throw fail(f + "." + k, "is set by the runner and cannot be overridden");
      }
      JsonNode v = e.getValue();
      if (v.isContainerNode()) {
        throw fail(f + "." + k, "expected a scalar value");
      }
      out.put(k, v.asText());
    }
    return out;
  }

  private Initial initial(JsonNode n, Set<String> names) {
    if (n == null || n.isNull()) {
      return new Initial(null, List.copyOf(names), Map.of(), Map.of());
    }
    object(n, "initial");
    only(n, "initial", "generate", "holders", "files", "from-dirs");
    Generate g = null;
    if (n.has("generate")) {
      JsonNode gn = object(n.get("generate"), "initial.generate");
      only(gn, "initial.generate", "n", "key-size", "value-size", "seed");
      int count =
          integer(required(gn, "n", "initial.generate"), "initial.generate.n", 0, 5_000_000);
      Size ks =
          gn.has("key-size")
              ? size(gn.get("key-size"), "initial.generate.key-size", 12, 1024)
              : new Size(16, 16);
      Size vs =
          gn.has("value-size")
              ? size(gn.get("value-size"), "initial.generate.value-size", 0, 1 << 20)
              : new Size(32, 32);
      long seed = gn.has("seed") ? longValue(gn.get("seed"), "initial.generate.seed") : 1;
      g = new Generate(count, ks, vs, seed);
    }
    List<String> holders =
        n.has("holders") ? names(n.get("holders"), "initial.holders", names) : List.copyOf(names);
    Map<String, Path> files = paths(n.get("files"), "initial.files", names, true);
    Map<String, Path> dirs = paths(n.get("from-dirs"), "initial.from-dirs", names, false);
    return new Initial(g, holders, files, dirs);
  }

  private Map<String, Path> paths(JsonNode n, String f, Set<String> names, boolean regularFile) {
    Map<String, Path> out = new LinkedHashMap<>();
    if (n == null || n.isNull()) {
      return out;
    }
    object(n, f);
    for (Iterator<Map.Entry<String, JsonNode>> it = n.properties().iterator(); it.hasNext(); ) {
      var e = it.next();
      if (!names.contains(e.getKey())) {
        throw fail(
            f + "." + e.getKey(),
            "no replica of that name (replicas: " + String.join(", ", names) + ")");
      }
      Path p = Path.of(text(e.getValue(), f + "." + e.getKey()));
      if (!p.isAbsolute()) {
        Path dir = file.toAbsolutePath().getParent();
        p = dir.resolve(p);
      }
      if (regularFile ? !Files.isRegularFile(p) : !Files.isDirectory(p)) {
        throw fail(
            f + "." + e.getKey(), (regularFile ? "no such file: " : "no such directory: ") + p);
      }
      out.put(e.getKey(), p);
    }
    return out;
  }

  private Event event(int i, JsonNode n, Set<String> names) {
    String f = "timeline[" + i + "]";
    if (n == null || !n.isObject() || n.size() != 1) {
      throw fail(
          f,
          "expected a mapping with exactly one event name (write, delete, repair, partition, heal, ...)");
    }
    String kind = n.fieldNames().next();
    JsonNode v = n.get(kind);
    f = f + "." + kind;
    switch (kind) {
      case "write", "delete" -> {
        object(v, f);
        only(v, f, "on", "keys", "range", "count", "value-size", "async");
        List<String> on = names(required(v, "on", f), f + ".on", names);
        Keys keys = keys(v, f, kind.equals("delete"));
        Size vs =
            v.has("value-size") ? size(v.get("value-size"), f + ".value-size", 0, 1 << 20) : null;
        if (kind.equals("delete") && vs != null) {
          throw fail(f + ".value-size", "a delete has no value");
        }
        return new Write(i, on, keys, vs, kind.equals("delete"), bool(v, "async", f, false));
      }
      case "repair" -> {
        object(v, f);
        only(v, f, "from", "to", "async", "expect");
        String from = replica(required(v, "from", f), f + ".from", names);
        String to = replica(required(v, "to", f), f + ".to", names);
        if (from.equals(to)) {
          throw fail(f + ".to", "a replica cannot repair with itself");
        }
        String ex =
            v.has("expect")
                ? oneOf(v.get("expect"), f + ".expect", Set.of("ok", "fail", "any"))
                : "any";
        return new Repair(i, from, to, bool(v, "async", f, false), ex);
      }
      case "partition", "heal", "blackhole", "delay", "reset" -> {
        JsonNode link = v;
        long amount = 0;
        if (v != null && v.isObject()) {
          String unit = kind.equals("delay") ? "ms" : kind.equals("reset") ? "after-bytes" : null;
          if (unit == null) {
            only(v, f, "link");
          } else {
            only(v, f, "link", unit);
            amount = longValue(required(v, unit, f), f + "." + unit);
            if (amount < 0) {
              throw fail(f + "." + unit, "must not be negative");
            }
          }
          link = required(v, "link", f);
        } else if (kind.equals("delay") || kind.equals("reset")) {
          throw fail(
              f,
              kind.equals("delay")
                  ? "expected {link: [a, b], ms: 50}"
                  : "expected {link: [a, b], after-bytes: 100000}");
        }
        if (link != null
            && link.isTextual()
            && link.asText().equals("all")
            && kind.equals("heal")) {
          return new LinkFault(i, kind, "*", "*", 0);
        }
        List<String> pair = names(link, f + (v != null && v.isObject() ? ".link" : ""), names);
        if (pair.size() != 2 || pair.get(0).equals(pair.get(1))) {
          throw fail(
              f,
              "a link is two distinct replicas, e.g. [a, b]"
                  + (kind.equals("heal") ? ", or 'all'" : ""));
        }
        return new LinkFault(i, kind, pair.get(0), pair.get(1), amount);
      }
      case "crash", "restart", "pause", "resume" -> {
        return new Lifecycle(i, kind, replica(v, f, names));
      }
      case "sleep" -> {
        return new Sleep(i, duration(v, f));
      }
      case "wait" -> {
        object(v, f);
        only(v, f, "link", "bytes", "timeout");
        List<String> pair = names(required(v, "link", f), f + ".link", names);
        if (pair.size() != 2) {
          throw fail(f + ".link", "a link is two replicas, e.g. [a, b]");
        }
        long bytes = longValue(required(v, "bytes", f), f + ".bytes");
        Duration t =
            v.has("timeout") ? duration(v.get("timeout"), f + ".timeout") : Duration.ofSeconds(60);
        return new WaitBytes(i, pair.get(0), pair.get(1), bytes, t);
      }
      case "await" -> {
        return new Await(i);
      }
      default ->
          throw fail(
              f,
              "unknown event (known: write, delete, repair, partition, heal, blackhole, delay, reset, crash, restart, pause, resume, sleep, wait, await)");
    }
  }

  private Keys keys(JsonNode v, String f, boolean delete) {
    int count = v.has("count") ? integer(v.get("count"), f + ".count", 1, 5_000_000) : -1;
    if (v.has("keys")) {
      if (v.has("range") || count >= 0) {
        throw fail(f + ".keys", "give keys, or range (with an optional count), or count alone");
      }
      JsonNode k = v.get("keys");
      if (!k.isArray() || k.isEmpty()) {
        throw fail(f + ".keys", "expected a non-empty list of keys");
      }
      List<String> ks = new ArrayList<>();
      for (int j = 0; j < k.size(); j++) {
        String s = text(k.get(j), f + ".keys[" + j + "]");
        if (s.isEmpty() || s.length() > 1024) {
          throw fail(f + ".keys[" + j + "]", "a key is 1 to 1024 characters");
        }
        ks.add(s);
      }
      return new Keys(List.copyOf(ks), -1, -1, ks.size());
    }
    if (v.has("range")) {
      JsonNode r = v.get("range");
      if (!r.isArray() || r.size() != 2) {
        throw fail(f + ".range", "expected [from, to) as two key indices, e.g. [0, 1000]");
      }
      long from = longValue(r.get(0), f + ".range[0]");
      long to = longValue(r.get(1), f + ".range[1]");
      if (from < 0 || to <= from) {
        throw fail(f + ".range", "need 0 <= from < to, got [" + from + ", " + to + ")");
      }
      if (count > to - from) {
        throw fail(f + ".count", count + " keys cannot be drawn from a range of " + (to - from));
      }
      return new Keys(
          null, from, to, count < 0 ? (int) Math.min(Integer.MAX_VALUE, to - from) : count);
    }
    if (count < 0) {
      throw fail(f, "needs keys, range or count");
    }
    if (delete) {
      throw fail(
          f + ".count",
          "a delete needs keys or a range (count alone would delete keys never written)");
    }
    return new Keys(null, -1, -1, count);
  }

  private Expect expect(JsonNode n, Set<String> names) {
    if (n == null || n.isNull()) {
      return new Expect(0, null, "all", List.of(List.copyOf(names)), true, true, true, 0, 0);
    }
    object(n, "expect");
    only(
        n,
        "expect",
        "converge",
        "groups",
        "model",
        "no-loss",
        "no-resurrection",
        "min-doublings",
        "min-fallbacks");
    int rounds = 0;
    Duration seconds = null;
    String via = "all";
    if (n.has("converge")) {
      JsonNode c = object(n.get("converge"), "expect.converge");
      only(c, "expect.converge", "rounds", "within", "via");
      if (c.has("rounds") == c.has("within")) {
        throw fail(
            "expect.converge",
            "give either rounds (repairs the runner may add) or within (a duration, for background rounds)");
      }
      if (c.has("rounds")) {
        rounds = integer(c.get("rounds"), "expect.converge.rounds", 0, 10_000);
      } else {
        seconds = duration(c.get("within"), "expect.converge.within");
      }
      if (c.has("via")) {
        via = oneOf(c.get("via"), "expect.converge.via", VIA);
      }
    }
    List<List<String>> groups = new ArrayList<>();
    if (n.has("groups")) {
      JsonNode g = n.get("groups");
      if (!g.isArray() || g.isEmpty()) {
        throw fail("expect.groups", "expected a list of replica lists, e.g. [[a, b], [c]]");
      }
      Set<String> seen = new LinkedHashSet<>();
      for (int i = 0; i < g.size(); i++) {
        List<String> grp = names(g.get(i), "expect.groups[" + i + "]", names);
        for (String r : grp) {
          if (!seen.add(r)) {
            throw fail("expect.groups[" + i + "]", "replica " + r + " is in two groups");
          }
        }
        groups.add(grp);
      }
      if (!seen.equals(names)) {
        Set<String> missing = new LinkedHashSet<>(names);
        missing.removeAll(seen);
        throw fail(
            "expect.groups",
            "every replica must be in a group; missing: " + String.join(", ", missing));
      }
    } else {
      groups.add(List.copyOf(names));
    }
    return new Expect(
        rounds,
        seconds,
        via,
        List.copyOf(groups),
        bool(n, "model", "expect", true),
        bool(n, "no-loss", "expect", true),
        bool(n, "no-resurrection", "expect", true),
        n.has("min-doublings")
            ? integer(n.get("min-doublings"), "expect.min-doublings", 0, 1_000_000)
            : 0,
        n.has("min-fallbacks")
            ? integer(n.get("min-fallbacks"), "expect.min-fallbacks", 0, 1_000_000)
            : 0);
  }

  // ------------------------------------------------------------------ scalars

  private void only(JsonNode n, String f, String... allowed) {
    Set<String> ok = Set.of(allowed);
    for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
      String k = it.next();
      if (!ok.contains(k)) {
        throw fail(
            f.isEmpty() ? k : f + "." + k,
            "unknown field (allowed here: " + String.join(", ", allowed) + ")");
      }
    }
  }

  private JsonNode object(JsonNode n, String f) {
    if (n == null || !n.isObject()) {
      throw fail(f, "expected a mapping");
    }
    return n;
  }

  private JsonNode required(JsonNode n, String k, String f) {
    JsonNode v = n.get(k);
    if (v == null || v.isNull()) {
      throw fail(f.isEmpty() ? k : f + "." + k, "missing");
    }
    return v;
  }

  private String text(JsonNode n, String f) {
    if (n == null || !n.isValueNode() || n.isNull()) {
      throw fail(f, "expected a string");
    }
    return n.asText();
  }

  private String replicaName(JsonNode n, String f) {
    String s = text(n, f);
    if (!s.matches("[A-Za-z0-9._-]{1,32}")) {
      throw fail(f, "replica name '" + s + "' must be 1-32 characters of A-Z a-z 0-9 . _ -");
    }
    return s;
  }

  private String replica(JsonNode n, String f, Set<String> names) {
    String s = text(n, f);
    if (!names.contains(s)) {
      throw fail(f, "no replica named '" + s + "' (replicas: " + String.join(", ", names) + ")");
    }
    return s;
  }

  private List<String> names(JsonNode n, String f, Set<String> names) {
    List<String> out = new ArrayList<>();
    if (n != null && n.isArray()) {
      for (int i = 0; i < n.size(); i++) {
        out.add(replica(n.get(i), f + "[" + i + "]", names));
      }
      if (out.isEmpty()) {
        throw fail(f, "empty list of replicas");
      }
    } else {
      out.add(replica(n, f, names));
    }
    return List.copyOf(out);
  }

  private String oneOf(JsonNode n, String f, Set<String> allowed) {
    String s = text(n, f);
    if (!allowed.contains(s)) {
      throw fail(
          f, "'" + s + "' is not one of " + String.join(", ", new java.util.TreeSet<>(allowed)));
    }
    return s;
  }

  private int integer(JsonNode n, String f, int min, int max) {
    long v = longValue(n, f);
    if (v < min || v > max) {
      throw fail(f, v + " is outside [" + min + ", " + max + "]");
    }
    return (int) v;
  }

  private long longValue(JsonNode n, String f) {
    if (n != null && n.canConvertToLong() && n.isIntegralNumber()) {
      return n.asLong();
    }
    if (n != null && n.isTextual()) {
      try {
        return Long.parseLong(n.asText().replace("_", ""));
      } catch (NumberFormatException e) {
        // fall through
      }
    }
    throw fail(f, "expected an integer, got " + (n == null ? "nothing" : "'" + n.asText() + "'"));
  }

  private boolean bool(JsonNode n, String k, String f, boolean dflt) {
    JsonNode v = n.get(k);
    if (v == null) {
      return dflt;
    }
    if (!v.isBoolean()) {
      throw fail(f + "." + k, "expected true or false, got '" + v.asText() + "'");
    }
    return v.asBoolean();
  }

  private Duration duration(JsonNode n, String f) {
    if (n != null && n.isIntegralNumber() && n.asLong() == 0) {
      return Duration.ZERO;
    }
    String s = text(n, f);
    try {
      Duration d = Durations.parse(s);
      if (d.isNegative()) {
        throw fail(f, "must not be negative");
      }
      return d;
    } catch (IllegalArgumentException e) {
      throw fail(f, e.getMessage());
    }
  }

  private Size size(JsonNode n, String f, int min, int max) {
    int lo;
    int hi;
    if (n != null && n.isObject()) {
      only(n, f, "min", "max");
      lo = integer(required(n, "min", f), f + ".min", min, max);
      hi = integer(required(n, "max", f), f + ".max", min, max);
      if (hi < lo) {
        throw fail(f, "max " + hi + " < min " + lo);
      }
    } else {
      lo = hi = integer(n, f, min, max);
    }
    return new Size(lo, hi);
  }
}
