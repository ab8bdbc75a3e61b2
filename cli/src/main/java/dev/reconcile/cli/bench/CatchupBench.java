package dev.reconcile.cli.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.reconcile.agent.AgentConfig;
import dev.reconcile.agent.LocalReplica;
import dev.reconcile.cli.AgentJvm;
import dev.reconcile.core.ReplicaRecord;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Catch-up of an empty replica by separate agent processes: a source replica holding {@code
 * records} records of {@code valueBytes} is written once (in this JVM, through {@link
 * LocalReplica}); each trial starts two fresh agent JVMs ({@code java -jar reconcile.jar agent}),
 * the source on its data and a new replica on an empty directory, and times one {@code POST
 * /repair?peer=SOURCE} on the new replica (wall time of the HTTP call: the whole round, session and
 * stream). Cold JVMs are the point: a catch-up is what a just-started agent does.
 *
 * <p>With {@code warmSource} the source is one agent process for all trials instead, a peer in
 * service: it has served one untimed catch-up of a scratch replica before the first trial (its JIT
 * compiled the read and send paths, its block cache holds what that read), and its RocksDB is idle
 * before each trial. The new replica is a just-started process in every trial either way.
 *
 * <p>Correctness of every trial: {@code GET /sketch/fingerprints} of both agents byte for byte,
 * then (the new replica's agent stopped) a full scan of the new replica compared record by record
 * (key, value, version, origin, tombstone) with the source, opened read-only, and the record counts
 * equal.
 *
 * <p>Where the CPU went (Linux): each trial also splits both agents' CPU from the POST to its reply
 * by thread group (JIT compilers, garbage collector, RocksDB's threads, the rest) and sums the time
 * their threads were runnable but waiting for a core ({@link ThreadCpu}); the hypervisor's steal
 * comes from {@code /proc/stat}. Just before the POST this bench's thread times two fixed pieces of
 * work in CPU time ({@link CpuCalibration}: {@code calibration_core_ms} in registers, {@code
 * calibration_memory_ms} through an 8 MB array): how fast the cores were at that moment.
 *
 * <p>With {@code jfrDir} set each agent runs with {@code -XX:StartFlightRecording} (settings {@code
 * jfrSettings}: a name such as {@code profile} or a {@code .jfc} file) and leaves {@code
 * ROLE-VALUEBYTES-tTRIAL.jfr} there.
 */
public final class CatchupBench {
  private static final Pattern LISTENING =
      Pattern.compile("agent (\\S+) listening peer=(\\S+):(\\d+) http=(\\S+):(\\d+)");
  private static final ObjectMapper JSON = new ObjectMapper();

  private CatchupBench() {}

  /**
   * One catch-up configuration.
   *
   * @param jvmOptions extra options for both agent JVMs, after {@link AgentJvm#defaultOptions} (the
   *     options bin/reconcile gives an agent; none extra: the defaults a user gets)
   * @param classArchive whether the agents map a class-data sharing archive, as bin/reconcile's do
   *     (made by {@link AgentJvm#makeClassArchive} the first time this process needs one)
   * @param agentSettings extra agent config ({@code --set KEY=VALUE}) for both agents
   * @param warmSource one source process for all trials, warmed by an untimed catch-up (a peer in
   *     service), instead of a just-started one per trial
   */
  public record Config(
      int records,
      int valueBytes,
      int trials,
      Path jar,
      Path work,
      Path jfrDir,
      String jfrSettings,
      List<String> jvmOptions,
      boolean classArchive,
      Map<String, String> agentSettings,
      boolean warmSource,
      long seed) {}

  /** The targets of the catch-up (round) and of the stream phase, for the plot. */
  static final double ROUND_RECORDS_PER_S_TARGET = 200_000;

  static final double STREAM_RECORDS_PER_S_TARGET = 300_000;
  static final double ROUND_MB_PER_S_TARGET = 400;
  static final double STREAM_MB_PER_S_TARGET = 500;

  /** Medians over the trials; {@code warmSource} as configured. */
  public record Summary(
      int records,
      int valueBytes,
      boolean warmSource,
      int trials,
      int correctTrials,
      double wallMillisMedian,
      double sessionMillisMedian,
      double streamMillisMedian,
      double recordsPerSecondMedian,
      double megabytesPerSecondMedian,
      double streamRecordsPerSecondMedian,
      double streamMegabytesPerSecondMedian,
      double newCpuSecondsMedian,
      double sourceCpuSecondsMedian) {}

  static Csv trialsCsv(Path out) {
    return new Csv(
        out.resolve("catchup-trials.csv"),
        "records",
        "value_bytes",
        "trial",
        "wall_ms",
        "session_ms",
        "stream_ms",
        "records_received",
        "record_bytes_received",
        "records_per_s",
        "mb_per_s",
        "stream_records_per_s",
        "stream_mb_per_s",
        "new_cpu_s",
        "source_cpu_s",
        "new_jit_cpu_s",
        "new_gc_cpu_s",
        "new_rocksdb_cpu_s",
        "new_other_cpu_s",
        "new_wait_s",
        "source_jit_cpu_s",
        "source_wait_s",
        "steal_s",
        "calibration_core_ms",
        "calibration_memory_ms",
        "correct");
  }

  public static Summary run(Config c, Csv csv, Consumer<String> log) throws Exception {
    Path dir = c.work().resolve("catchup-" + c.valueBytes());
    AgentBench.wipe(dir);
    Path source = dir.resolve("source");
    long t0 = System.nanoTime();
    load(c, source);
    log.accept(
        String.format(
            "catchup: source of %,d records x %,d B written in %.1f s",
            c.records(), c.valueBytes(), (System.nanoTime() - t0) / 1e9));
    List<String> options = Agent.jvmOptions(c);
    List<String> jvm = new ArrayList<>(options);
    // RocksDB's JNI library from one copy in the work folder, as bin/reconcile gives an agent one
    // beside the jar (not a copy per agent process in /tmp; removed with the folder).
    AgentJvm.rocksDbLibraryOption(c.jar(), dir.resolve("native")).ifPresent(jvm::add);
    if (c.classArchive()) {
      jvm.addAll(classArchive(c, options, jvm, log));
    }
    log.accept("catchup: agents run " + c.jar().toAbsolutePath());
    log.accept("catchup: agent JVM options " + (jvm.isEmpty() ? "(none)" : String.join(" ", jvm)));
    Agent warm = null;
    if (c.warmSource()) {
      long w0 = System.nanoTime();
      warm = warmSource(c, jvm, source, dir);
      log.accept(
          String.format(
              "catchup: the source agent settled and served an untimed catch-up in %.1f s; it"
                  + " serves every trial",
              (System.nanoTime() - w0) / 1e9));
    } else {
      log.accept(
          String.format(
              "catchup: the source's store settled (flushes and compactions of the load) in %.1f s",
              settleSource(c, jvm, source, dir)));
    }
    double payloadMb = (double) c.records() * c.valueBytes() / 1e6;
    CpuCalibration cpu = new CpuCalibration();
    double[] wall = new double[c.trials()];
    double[] session = new double[c.trials()];
    double[] stream = new double[c.trials()];
    double[] rps = new double[c.trials()];
    double[] mbps = new double[c.trials()];
    double[] srps = new double[c.trials()];
    double[] smbps = new double[c.trials()];
    // CPU seconds (user and system, every thread: JIT, GC, RocksDB's) of each agent process from
    // the POST to its reply: what the round cost the machine, steadier than its wall time here.
    double[] newCpu = new double[c.trials()];
    double[] sourceCpu = new double[c.trials()];
    int correct = 0;
    try {
      for (int t = 0; t < c.trials(); t++) {
        Path target = dir.resolve("new-" + t);
        String newNode = "new-" + t; // a warm source meets a new peer in every trial
        JsonNode report;
        long wallNanos;
        ThreadCpu.Totals dstThreads = null;
        ThreadCpu.Totals srcThreads = null;
        double steal = Double.NaN;
        double calibrationCore;
        double calibrationMemory;
        boolean sameFingerprints;
        if (warm != null) {
          warm.waitUntilRocksDbIdle();
        }
        try (Agent started = warm == null ? Agent.start(c, jvm, "source", t, source, dir) : null;
            Agent dst = Agent.start(c, jvm, newNode, t, target, dir)) {
          Agent src = warm == null ? started : warm;
          calibrationCore = cpu.sampleCore();
          calibrationMemory = cpu.sampleMemory();
          double dstCpu0 = dst.cpuSeconds();
          double srcCpu0 = src.cpuSeconds();
          Optional<ThreadCpu.Sample> dstThreads0 = ThreadCpu.of(dst.pid());
          Optional<ThreadCpu.Sample> srcThreads0 = ThreadCpu.of(src.pid());
          OptionalDouble steal0 = ThreadCpu.steal();
          long w0 = System.nanoTime();
          report =
              dst.post("/repair?peer=" + src.peerHost + ":" + src.peerPort, Duration.ofMinutes(30));
          wallNanos = System.nanoTime() - w0;
          newCpu[t] = dst.cpuSeconds() - dstCpu0;
          sourceCpu[t] = src.cpuSeconds() - srcCpu0;
          dstThreads = ThreadCpu.since(dstThreads0, dst.pid());
          srcThreads = ThreadCpu.since(srcThreads0, src.pid());
          OptionalDouble steal1 = ThreadCpu.steal();
          if (steal0.isPresent() && steal1.isPresent()) {
            steal = steal1.getAsDouble() - steal0.getAsDouble();
          }
          if (!report.path("ok").asBoolean(false)) {
            throw new IllegalStateException("catch-up round failed: " + report);
          }
          sameFingerprints =
              Arrays.equals(dst.get("/sketch/fingerprints"), src.get("/sketch/fingerprints"));
        }
        long mismatches = compare(c, source, newNode, target);
        boolean ok = sameFingerprints && mismatches == 0;
        correct += ok ? 1 : 0;
        long received = report.path("recordsReceived").asLong();
        if (received != c.records()) {
          throw new IllegalStateException(
              "catch-up received " + received + " records, expected " + c.records());
        }
        wall[t] = wallNanos / 1e6;
        session[t] = report.path("sessionMillis").asLong();
        stream[t] = Math.max(1, report.path("durationMillis").asLong() - session[t]);
        rps[t] = c.records() * 1000.0 / wall[t];
        mbps[t] = payloadMb * 1000.0 / wall[t];
        srps[t] = c.records() * 1000.0 / stream[t];
        smbps[t] = payloadMb * 1000.0 / stream[t];
        csv.row(
            c.records(),
            c.valueBytes(),
            t,
            wall[t],
            session[t],
            stream[t],
            received,
            report.path("recordBytesReceived").asLong(),
            rps[t],
            mbps[t],
            srps[t],
            smbps[t],
            newCpu[t],
            sourceCpu[t],
            dstThreads == null ? Double.NaN : dstThreads.jitSeconds(),
            dstThreads == null ? Double.NaN : dstThreads.gcSeconds(),
            dstThreads == null ? Double.NaN : dstThreads.rocksDbSeconds(),
            dstThreads == null ? Double.NaN : dstThreads.otherSeconds(),
            dstThreads == null ? Double.NaN : dstThreads.waitSeconds(),
            srcThreads == null ? Double.NaN : srcThreads.jitSeconds(),
            srcThreads == null ? Double.NaN : srcThreads.waitSeconds(),
            steal,
            calibrationCore,
            calibrationMemory,
            ok);
        log.accept(
            String.format(
                "catchup %,d x %,d B, trial %d: round %.0f ms (session %.0f, stream %.0f):"
                    + " %,.0f records/s, %.1f MB/s; stream %,.0f records/s, %.1f MB/s; CPU %.2f s"
                    + " new, %.2f s source; %s",
                c.records(),
                c.valueBytes(),
                t,
                wall[t],
                session[t],
                stream[t],
                rps[t],
                mbps[t],
                srps[t],
                smbps[t],
                newCpu[t],
                sourceCpu[t],
                ok
                    ? "contents equal"
                    : "MISMATCH (fingerprints "
                        + (sameFingerprints ? "equal" : "differ")
                        + ", "
                        + mismatches
                        + " records differ)"));
        AgentBench.wipe(target);
      }
    } finally {
      if (warm != null) {
        warm.close();
      }
      AgentBench.wipe(dir);
    }
    return new Summary(
        c.records(),
        c.valueBytes(),
        c.warmSource(),
        c.trials(),
        correct,
        Medians.of(wall),
        Medians.of(session),
        Medians.of(stream),
        Medians.of(rps),
        Medians.of(mbps),
        Medians.of(srps),
        Medians.of(smbps),
        Medians.of(newCpu),
        Medians.of(sourceCpu));
  }

  /**
   * The options that give the agents the class archive bin/reconcile would give them: made by a
   * training demo with the agents' options {@code jvm} ({@code AgentJvm}) the first time this
   * process needs one for that jar and those {@code keyOptions} (the agents' options without the
   * library folder, which is one per value size and does not matter to an archive: the sizes of a
   * run share one archive), kept in a temporary folder until the process exits. None when this JVM
   * cannot make one.
   */
  private static synchronized List<String> classArchive(
      Config c, List<String> keyOptions, List<String> jvm, Consumer<String> log) throws Exception {
    List<String> key = new ArrayList<>(keyOptions);
    key.add(c.jar().toAbsolutePath().toString());
    List<String> known = ARCHIVES.get(key);
    if (known != null) {
      return known;
    }
    long t0 = System.nanoTime();
    Path dir = Files.createTempDirectory("reconcile-agent-classes");
    dir.toFile().deleteOnExit();
    Path jsa = dir.resolve("agent.jsa");
    jsa.toFile().deleteOnExit(); // registered after its folder: deleted before it
    List<String> options =
        AgentJvm.makeClassArchive(AgentJvm.JAVA, c.jar(), jvm, jsa, Duration.ofMinutes(5))
            .map(AgentJvm::classArchiveOptions)
            .orElse(List.of());
    log.accept(
        options.isEmpty()
            ? "catchup: this JVM made no class archive; the agents run without one"
            : String.format(
                "catchup: agent class archive made by a training demo in %.1f s",
                (System.nanoTime() - t0) / 1e9));
    ARCHIVES.put(key, options);
    return options;
  }

  private static final Map<List<String>, List<String>> ARCHIVES = new HashMap<>();

  /**
   * Opens the source's freshly written store in an agent once and waits until RocksDB has flushed
   * and compacted what the load wrote (no flush or compaction running or pending, no immutable
   * memtable, for {@link AgentBench#QUIET_NANOS} in a row), then stops it. A peer in service is not
   * compacting a store it was just given; without this the first trial's source did that during the
   * round (0.3-1.5 CPU-s of {@code rocksdb:low} on these 2 cores). Returns the seconds taken.
   *
   * <p>Before the wait it asks the agent for its self-check, which reads the store at a snapshot.
   * The load's data reach the bottom level through the flush at the agent's recovery, with their
   * sequence numbers; RocksDB rewrites such files once, to zero them ({@code BottommostFiles}
   * compactions), when the first snapshot taken after them is released. Without the self-check that
   * was the first trial's round (0.3-0.4 CPU-s of {@code rocksdb:low} at 200 000 x 100 B).
   */
  private static double settleSource(Config c, List<String> jvm, Path source, Path dir)
      throws Exception {
    long t0 = System.nanoTime();
    startSettled(c, jvm, source, dir).close();
    return (System.nanoTime() - t0) / 1e9;
  }

  /** The source agent, started, with its store settled as {@link #settleSource} describes. */
  private static Agent startSettled(Config c, List<String> jvm, Path source, Path dir)
      throws Exception {
    Agent src = Agent.start(c, jvm, "source", -1, source, dir);
    try {
      src.get("/selfcheck");
      src.waitUntilRocksDbIdle();
      return src;
    } catch (Exception | Error e) {
      src.close();
      throw e;
    }
  }

  /**
   * Starts the source agent that serves every trial, as {@link #settleSource} settles it, then has
   * it serve one catch-up of a scratch replica (not timed; it must succeed with every record) and
   * waits until its RocksDB is idle again.
   */
  private static Agent warmSource(Config c, List<String> jvm, Path source, Path dir)
      throws Exception {
    Agent src = startSettled(c, jvm, source, dir);
    try {
      Path scratch = dir.resolve("warm-up");
      try (Agent w = Agent.start(c, jvm, "warm-up", -1, scratch, dir)) {
        JsonNode r =
            w.post("/repair?peer=" + src.peerHost + ":" + src.peerPort, Duration.ofMinutes(30));
        if (!r.path("ok").asBoolean(false) || r.path("recordsReceived").asLong() != c.records()) {
          throw new IllegalStateException("the source's warm-up catch-up failed: " + r);
        }
      }
      AgentBench.wipe(scratch);
      src.waitUntilRocksDbIdle();
      return src;
    } catch (Exception | Error e) {
      src.close();
      throw e;
    }
  }

  /** Metrics of the agent that are above 0 while RocksDB flushes or compacts, or has that to do. */
  private static final List<String> ROCKSDB_BUSY =
      List.of(
          "reconcile_rocksdb_running_compactions",
          "reconcile_rocksdb_running_flushes",
          "reconcile_rocksdb_immutable_memtables",
          "reconcile_rocksdb_pending_compaction_bytes");

  private static Map<String, String> settings(Config c, String node, Path data) {
    Map<String, String> m = new HashMap<>(c.agentSettings());
    m.put("node-id", node);
    m.put("cluster-id", "bench");
    m.put("data", data.toString());
    m.put("peer-listen", "127.0.0.1:0");
    m.put("http-listen", "127.0.0.1:0");
    m.put("repair-interval", "0");
    m.put("purge-interval", "0");
    m.put("session-timeout", "30m");
    m.put("idle-timeout", "5m");
    return m;
  }

  /** Writes the source replica: keys {@code k0..}, random values, one version, one origin. */
  private static void load(Config c, Path source) {
    SplittableRandom rnd = new SplittableRandom(c.seed());
    try (LocalReplica r = LocalReplica.open(AgentConfig.fromMap(settings(c, "source", source)))) {
      long version = r.newVersion();
      long origin = LocalReplica.origin("loader");
      List<ReplicaRecord> batch = new ArrayList<>();
      long bytes = 0;
      for (int i = 0; i < c.records(); i++) {
        byte[] v = new byte[c.valueBytes()];
        for (int j = 0; j < v.length; j += 8) {
          long x = rnd.nextLong();
          for (int k = 0; k < 8 && j + k < v.length; k++) {
            v[j + k] = (byte) (x >>> (8 * k));
          }
        }
        batch.add(
            new ReplicaRecord(
                ("k" + i).getBytes(StandardCharsets.UTF_8), v, version, origin, false));
        bytes += v.length;
        if (batch.size() == 10_000 || bytes >= (64L << 20)) {
          r.putAll(batch);
          batch.clear();
          bytes = 0;
        }
      }
      r.putAll(batch);
    }
  }

  /**
   * Records that tell the new replica and the source apart ({@link StreamBench#differingRecords}):
   * 0 when the two stores hold the same records.
   */
  private static long compare(Config c, Path source, String newNode, Path target) {
    // Read-only: with a warm source its agent still holds the store.
    try (LocalReplica src =
            LocalReplica.openReadOnly(AgentConfig.fromMap(settings(c, "source", source)));
        LocalReplica dst = LocalReplica.open(AgentConfig.fromMap(settings(c, newNode, target)))) {
      return StreamBench.differingRecords(src, dst, key -> false);
    }
  }

  /** An agent process, stopped (SIGTERM, then SIGKILL after 30 s) by {@link #close()}. */
  private static final class Agent implements AutoCloseable {
    private static final HttpClient HTTP =
        HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    final Process process;
    final String peerHost;
    final int peerPort;
    final String http;

    private Agent(Process process, String peerHost, int peerPort, String http) {
      this.process = process;
      this.peerHost = peerHost;
      this.peerPort = peerPort;
      this.http = http;
    }

    /** Waits (at most 10 minutes) until the agent's RocksDB has been idle for a while. */
    void waitUntilRocksDbIdle() throws Exception {
      AgentBench.waitUntilQuiet(this::rocksDbBusy, 10 * 60_000_000_000L);
    }

    /** Whether the agent's RocksDB flushes or compacts, or has that pending (its metrics). */
    boolean rocksDbBusy() throws Exception {
      String metrics = new String(get("/metrics"), StandardCharsets.UTF_8);
      for (String line : metrics.split("\n")) {
        for (String name : ROCKSDB_BUSY) {
          if (line.startsWith(name)
              && Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)) > 0) {
            return true;
          }
        }
      }
      return false;
    }

    long pid() {
      return process.pid();
    }

    /** CPU seconds the process has used so far (all threads, user and system). */
    double cpuSeconds() {
      return process
          .info()
          .totalCpuDuration()
          .map(d -> d.toNanos() / 1e9)
          .orElseThrow(() -> new IllegalStateException("no CPU time for agent " + process.pid()));
    }

    /** What bin/reconcile gives an agent, then the configuration's extra options. */
    static List<String> jvmOptions(Config c) {
      List<String> out = new ArrayList<>(AgentJvm.defaultOptions(c.jvmOptions()));
      out.addAll(c.jvmOptions());
      return out;
    }

    static Agent start(Config c, List<String> jvm, String role, int trial, Path data, Path logDir)
        throws Exception {
      List<String> cmd = new ArrayList<>();
      cmd.add(AgentJvm.JAVA.toString());
      cmd.addAll(jvm);
      if (c.jfrDir() != null) {
        Files.createDirectories(c.jfrDir());
        Path f = c.jfrDir().resolve(role + "-" + c.valueBytes() + "-t" + trial + ".jfr");
        cmd.add(
            "-XX:StartFlightRecording=settings="
                + c.jfrSettings()
                + ",filename="
                + f.toAbsolutePath());
      }
      cmd.addAll(List.of("-jar", c.jar().toString(), "agent"));
      for (Map.Entry<String, String> e : settings(c, role, data).entrySet()) {
        cmd.add("--set");
        cmd.add(e.getKey() + "=" + e.getValue());
      }
      Path log = logDir.resolve(role + "-t" + trial + ".log");
      Process p =
          new ProcessBuilder(cmd)
              .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()))
              .start();
      CompletableFuture<Matcher> ready = new CompletableFuture<>();
      Thread reader =
          new Thread(
              () -> {
                try (BufferedReader r =
                    new BufferedReader(
                        new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                  String line;
                  while ((line = r.readLine()) != null) {
                    Matcher m = LISTENING.matcher(line);
                    if (m.find()) {
                      ready.complete(m);
                    }
                  }
                } catch (IOException e) {
                  // process gone
                }
                ready.completeExceptionally(
                    new IllegalStateException(
                        "agent " + role + " exited before listening; see " + log));
              },
              "catchup-" + role + "-stdout");
      reader.setDaemon(true);
      reader.start();
      try {
        Matcher m = ready.get(120, TimeUnit.SECONDS);
        return new Agent(
            p, m.group(2), Integer.parseInt(m.group(3)), m.group(4) + ":" + m.group(5));
      } catch (Exception e) {
        p.destroyForcibly();
        throw e;
      }
    }

    JsonNode post(String path, Duration timeout) throws Exception {
      HttpResponse<byte[]> r =
          HTTP.send(
              HttpRequest.newBuilder(URI.create("http://" + http + path))
                  .timeout(timeout)
                  .POST(HttpRequest.BodyPublishers.noBody())
                  .build(),
              HttpResponse.BodyHandlers.ofByteArray());
      return JSON.readTree(r.body());
    }

    byte[] get(String path) throws Exception {
      HttpResponse<byte[]> r =
          HTTP.send(
              HttpRequest.newBuilder(URI.create("http://" + http + path))
                  .timeout(Duration.ofMinutes(10))
                  .GET()
                  .build(),
              HttpResponse.BodyHandlers.ofByteArray());
      if (r.statusCode() != 200) {
        throw new IllegalStateException("GET " + path + ": HTTP " + r.statusCode());
      }
      return r.body();
    }

    @Override
    public void close() {
      process.destroy();
      try {
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
          process.destroyForcibly();
          process.waitFor(10, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        process.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
  }
}
