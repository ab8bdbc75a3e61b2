package dev.reconcile.bench;

import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;
import dev.reconcile.agent.store.ReplicaStore;
import dev.reconcile.cli.AgentJvm;
import dev.reconcile.cli.FileTrees;
import dev.reconcile.cli.bench.Medians;
import java.io.BufferedReader;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.zip.CRC32C;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.EnvOptions;
import org.rocksdb.FlushOptions;
import org.rocksdb.IngestExternalFileOptions;
import org.rocksdb.Options;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;
import org.rocksdb.SstFileReader;
import org.rocksdb.SstFileReaderIterator;
import org.rocksdb.SstFileWriter;
import org.rocksdb.WriteOptions;

/**
 * What a lean catch-up pipeline reaches on this machine with two just-started JVMs: the ceiling
 * against which the agent's catch-up (docs/benchmarks.md section 3a) is read. Not the product: no
 * protocol, no sketches, no Vert.x; plain sockets and RocksDB.
 *
 * <p>A source database holds {@code records} rows in 16 partitions laid out as the store's {@code
 * records_by_partition} (row = partition (2 B) | key, value = 26 B header, the value, 4 B checksum;
 * the bytes are random, as the catch-up bench's values). Per trial two fresh processes, started
 * with an agent's JVM options ({@link AgentJvm#defaultOptions}):
 *
 * <ul>
 *   <li>the <b>sender</b> opens the source read-only and, per partition, range-scans it into a
 *       table file ({@code SstFileWriter}, direct buffers, compressed as a load's files: {@link
 *       ReplicaStore#LOAD_FILE_COMPRESSION}) and sends the file ({@code FileChannel.transferTo})
 *       while it builds the next;
 *   <li>the <b>receiver</b> writes each file as it arrives, then on a second thread reads it back
 *       ({@code SstFileReader}, block checksums verified) doing the agent receiver's per-record
 *       checks (CRC32C of row and value, XXH3 of the key and of the value), sorts the elements into
 *       a second table file (element | key rows, as the digest index) and ingests both into an
 *       empty database.
 * </ul>
 *
 * The time is the receiver's, from the connection to the last ingest. After each trial the
 * receiver's records are compared with the source row by row (untimed); a difference ends the run.
 *
 * <pre>
 *   java -cp benchmarks/target/benchmarks.jar dev.reconcile.bench.BulkPipelineCeiling \
 *       [trials=5] [records at 100 B=200000] [records at 64 KiB=3000]
 * </pre>
 */
public final class BulkPipelineCeiling {
  private BulkPipelineCeiling() {}

  private static final byte[] RECORDS = "records_by_partition".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] DIGESTS = "digests".getBytes(StandardCharsets.US_ASCII);
  private static final int PARTITIONS = 16;
  private static final int HEADER = 26;
  private static final int TRAILER = 4;

  public static void main(String[] args) throws Exception {
    RocksDB.loadLibrary();
    switch (args.length > 0 ? args[0] : "") {
      case "send" -> send(Path.of(args[1]), Integer.parseInt(args[2]));
      case "recv" -> receive(Path.of(args[1]));
      default -> run(args);
    }
  }

  private static void run(String[] args) throws Exception {
    int trials = args.length > 0 ? Integer.parseInt(args[0]) : 5;
    int small = args.length > 1 ? Integer.parseInt(args[1]) : 200_000;
    int large = args.length > 2 ? Integer.parseInt(args[2]) : 3_000;
    Path work = Files.createTempDirectory("bulk-ceiling");
    try {
      Path src100 = work.resolve("src-100");
      Path src64k = work.resolve("src-64k");
      make(src100, small, 100);
      make(src64k, large, 65_536);
      double[][] ms = new double[2][trials];
      double[][] buildMs = new double[2][trials];
      long[] bytes = new long[2];
      for (int t = 0; t < trials; t++) {
        for (int c = 0; c < 2; c++) {
          Path src = c == 0 ? src100 : src64k;
          Path out = work.resolve("out");
          long[] r = trial(src, out);
          ms[c][t] = r[0] / 1e6;
          buildMs[c][t] = r[2] / 1e6;
          bytes[c] = r[1];
          String diff = compare(src, out.resolve("db"));
          if (diff != null) {
            throw new IllegalStateException("trial " + t + " received other rows: " + diff);
          }
          FileTrees.delete(out);
          long n = c == 0 ? small : large;
          System.out.printf(
              "trial %d, %d x %d B: %.0f ms, %.0f records/s, %.1f MB/s (sender building its"
                  + " table files %.0f ms), rows equal%n",
              t,
              n,
              c == 0 ? 100 : 65_536,
              ms[c][t],
              n / (ms[c][t] / 1e3),
              r[1] / 1e3 / ms[c][t],
              buildMs[c][t]);
        }
      }
      for (int c = 0; c < 2; c++) {
        double m = Medians.of(ms[c]);
        long n = c == 0 ? small : large;
        System.out.printf(
            "median %d x %d B: %.0f ms, %.0f records/s, %.1f MB/s (table files %d B; the sender"
                + " building them %.0f ms), %d trials compared row by row%n",
            n,
            c == 0 ? 100 : 65_536,
            m,
            n / (m / 1e3),
            bytes[c] / 1e3 / m,
            bytes[c],
            Medians.of(buildMs[c]),
            trials);
      }
    } finally {
      FileTrees.delete(work);
    }
  }

  /** One trial: a fresh receiver, then a fresh sender; returns {nanos, table-file bytes}. */
  private static long[] trial(Path src, Path out) throws Exception {
    Process recv = ChildJvm.of(BulkPipelineCeiling.class, "recv", out.toString()).start();
    try (BufferedReader r =
        new BufferedReader(new InputStreamReader(recv.getInputStream(), StandardCharsets.UTF_8))) {
      String ready = r.readLine();
      if (ready == null || !ready.startsWith("port ")) {
        throw new IllegalStateException("receiver did not start: " + ready);
      }
      Process send =
          ChildJvm.of(BulkPipelineCeiling.class, "send", src.toString(), ready.substring(5))
              .redirectErrorStream(true)
              .start();
      String sent = new String(send.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (send.waitFor() != 0) {
        throw new IllegalStateException("sender failed: " + sent);
      }
      String done = r.readLine();
      if (recv.waitFor() != 0 || done == null || !done.startsWith("done ")) {
        throw new IllegalStateException("receiver failed: " + done);
      }
      String[] f = done.split(" ");
      String built = sent.lines().filter(l -> l.startsWith("built ")).findFirst().orElseThrow();
      return new long[] {
        Long.parseLong(f[1]), Long.parseLong(f[2]), Long.parseLong(built.substring(6))
      };
    } finally {
      recv.destroy();
    }
  }

  // ------------------------------------------------------------------------------- source

  private static void make(Path dir, int records, int valueBytes) throws RocksDBException {
    List<ColumnFamilyHandle> hs = new ArrayList<>();
    try (DBOptions o =
            new DBOptions().setCreateIfMissing(true).setCreateMissingColumnFamilies(true);
        ColumnFamilyOptions co = new ColumnFamilyOptions();
        RocksDB db = RocksDB.open(o, dir.toString(), descriptors(co), hs);
        WriteOptions wo = new WriteOptions().setDisableWAL(true);
        FlushOptions fo = new FlushOptions().setWaitForFlush(true)) {
      SplittableRandom rnd = new SplittableRandom(12);
      Hasher64 h = Hashing.xxh3_64();
      for (int i = 0; i < records; i++) {
        byte[] key = ("key" + i).getBytes(StandardCharsets.US_ASCII);
        int p = (int) (h.hashBytesToLong(key) >>> 60);
        byte[] row = new byte[2 + key.length];
        row[1] = (byte) p;
        System.arraycopy(key, 0, row, 2, key.length);
        byte[] value = new byte[HEADER + valueBytes + TRAILER];
        rnd.nextBytes(value);
        db.put(hs.get(1), wo, row, value);
      }
      db.flush(fo, hs.get(1));
      db.compactRange(hs.get(1));
      hs.forEach(ColumnFamilyHandle::close);
    }
  }

  private static List<ColumnFamilyDescriptor> descriptors(ColumnFamilyOptions co) {
    return List.of(
        new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, co),
        new ColumnFamilyDescriptor(RECORDS, co),
        new ColumnFamilyDescriptor(DIGESTS, co));
  }

  // ------------------------------------------------------------------------------- sender

  private static final Path END = Path.of("");

  private static void send(Path src, int port) throws Exception {
    Path tmp = Files.createTempDirectory("bulk-send");
    BlockingQueue<Path> files = new ArrayBlockingQueue<>(2);
    List<ColumnFamilyHandle> hs = new ArrayList<>();
    try (DBOptions o = new DBOptions();
        ColumnFamilyOptions co = new ColumnFamilyOptions();
        RocksDB db = RocksDB.openReadOnly(o, src.toString(), descriptors(co), hs);
        SocketChannel ch =
            SocketChannel.open(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        Options fileOptions = new Options().setCompressionType(ReplicaStore.LOAD_FILE_COMPRESSION);
        EnvOptions env = new EnvOptions()) {
      ExecutorService out = Executors.newSingleThreadExecutor();
      Future<?> sending =
          out.submit(
              () -> {
                ByteBuffer len = ByteBuffer.allocate(8);
                for (Path f = files.take(); f != END; f = files.take()) {
                  try (FileChannel fc = FileChannel.open(f)) {
                    long size = fc.size();
                    writeLong(ch, len, size);
                    for (long pos = 0; pos < size; ) {
                      pos += fc.transferTo(pos, size - pos, ch);
                    }
                  }
                  Files.delete(f);
                }
                writeLong(ch, len, -1);
                return null;
              });
      long building = 0;
      ByteBuffer key = ByteBuffer.allocateDirect(1 << 16);
      ByteBuffer value = ByteBuffer.allocateDirect(1 << 20);
      for (int p = 0; p < PARTITIONS; p++) {
        byte[] lo = {0, (byte) p};
        byte[] hi = {0, (byte) (p + 1)};
        Path f = tmp.resolve(p + ".sst");
        long t = System.nanoTime();
        try (Slice upper = new Slice(hi);
            ReadOptions ro = new ReadOptions().setIterateUpperBound(upper).setFillCache(false);
            RocksIterator it = db.newIterator(hs.get(1), ro);
            SstFileWriter w = new SstFileWriter(env, fileOptions)) {
          w.open(f.toString());
          int rows = 0;
          for (it.seek(lo); it.isValid(); it.next()) {
            key.clear();
            it.key(key);
            value.clear();
            it.value(value);
            w.put(key, value);
            rows++;
          }
          it.status();
          if (rows == 0) {
            continue;
          }
          w.finish();
        }
        building += System.nanoTime() - t;
        files.put(f);
      }
      files.put(END);
      sending.get();
      System.out.println("built " + building);
      out.shutdown();
      hs.forEach(ColumnFamilyHandle::close);
    } finally {
      FileTrees.delete(tmp);
    }
  }

  private static void writeLong(SocketChannel ch, ByteBuffer b, long v) throws IOException {
    b.clear();
    b.putLong(v).flip();
    while (b.hasRemaining()) {
      ch.write(b);
    }
  }

  // ----------------------------------------------------------------------------- receiver

  private static void receive(Path out) throws Exception {
    Files.createDirectories(out);
    List<ColumnFamilyHandle> hs = new ArrayList<>();
    try (ServerSocketChannel server = ServerSocketChannel.open();
        DBOptions o =
            new DBOptions().setCreateIfMissing(true).setCreateMissingColumnFamilies(true);
        ColumnFamilyOptions co = new ColumnFamilyOptions();
        RocksDB db = RocksDB.open(o, out.resolve("db").toString(), descriptors(co), hs)) {
      server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      System.out.println("port " + ((InetSocketAddress) server.getLocalAddress()).getPort());
      System.out.flush();
      try (SocketChannel ch = server.accept()) {
        long t0 = System.nanoTime();
        ExecutorService check = Executors.newSingleThreadExecutor();
        List<Future<?>> ingests = new ArrayList<>();
        ByteBuffer len = ByteBuffer.allocate(8);
        ByteBuffer buf = ByteBuffer.allocateDirect(1 << 20);
        long bytes = 0;
        for (int i = 0; ; i++) {
          len.clear();
          readFully(ch, len);
          long size = len.flip().getLong();
          if (size < 0) {
            break;
          }
          Path f = out.resolve(i + ".sst");
          try (FileChannel fc =
              FileChannel.open(f, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            for (long got = 0; got < size; ) {
              buf.clear().limit((int) Math.min(buf.capacity(), size - got));
              readFully(ch, buf);
              got += buf.flip().remaining();
              while (buf.hasRemaining()) {
                fc.write(buf);
              }
            }
          }
          bytes += size;
          Path digests = out.resolve(i + "-digests.sst");
          ingests.add(check.submit(() -> checkAndIngest(db, hs, f, digests)));
        }
        for (Future<?> g : ingests) {
          g.get();
        }
        long nanos = System.nanoTime() - t0;
        check.shutdown();
        System.out.println("done " + nanos + " " + bytes);
      }
      hs.forEach(ColumnFamilyHandle::close);
    }
  }

  private static void readFully(SocketChannel ch, ByteBuffer b) throws IOException {
    while (b.hasRemaining()) {
      if (ch.read(b) < 0) {
        throw new EOFException("sender closed with " + b.remaining() + " bytes due");
      }
    }
  }

  /** The agent receiver's per-record checks, the digest rows' file, both files ingested. */
  private static Void checkAndIngest(
      RocksDB db, List<ColumnFamilyHandle> hs, Path records, Path digests) throws Exception {
    Hasher64 h = Hashing.xxh3_64();
    CRC32C crc = new CRC32C();
    List<byte[]> rows = new ArrayList<>();
    try (Options o = new Options();
        SstFileReader r = new SstFileReader(o)) {
      r.open(records.toString());
      r.verifyChecksum();
      try (ReadOptions ro = new ReadOptions().setFillCache(false);
          SstFileReaderIterator it = r.newIterator(ro)) {
        for (it.seekToFirst(); it.isValid(); it.next()) {
          byte[] k = it.key();
          byte[] v = it.value();
          crc.reset();
          crc.update(k, 2, k.length - 2);
          crc.update(v, 0, v.length - TRAILER);
          long valueHash = h.hashBytesToLong(v, HEADER, v.length - HEADER - TRAILER);
          long keyHash = h.hashBytesToLong(k, 2, k.length - 2);
          long element = keyHash ^ valueHash ^ crc.getValue();
          byte[] row = new byte[10 + k.length - 2];
          row[0] = k[0];
          row[1] = k[1];
          ByteBuffer.wrap(row, 2, 8).putLong(element);
          System.arraycopy(k, 2, row, 10, k.length - 2);
          rows.add(row);
        }
        it.status();
      }
    }
    rows.sort(Arrays::compareUnsigned);
    try (Options o = new Options().setCompressionType(ReplicaStore.LOAD_FILE_COMPRESSION);
        EnvOptions env = new EnvOptions();
        SstFileWriter w = new SstFileWriter(env, o)) {
      w.open(digests.toString());
      for (byte[] row : rows) {
        w.put(row, new byte[0]);
      }
      w.finish();
    }
    try (IngestExternalFileOptions io = new IngestExternalFileOptions().setMoveFiles(true)) {
      db.ingestExternalFile(hs.get(1), List.of(records.toString()), io);
      db.ingestExternalFile(hs.get(2), List.of(digests.toString()), io);
    }
    return null;
  }

  // ----------------------------------------------------------------------------- checking

  /** Null when the received records equal the source's row by row, else the first difference. */
  private static String compare(Path src, Path got) throws RocksDBException {
    List<ColumnFamilyHandle> a = new ArrayList<>();
    List<ColumnFamilyHandle> b = new ArrayList<>();
    try (DBOptions o = new DBOptions();
        ColumnFamilyOptions co = new ColumnFamilyOptions();
        RocksDB x = RocksDB.openReadOnly(o, src.toString(), descriptors(co), a);
        RocksDB y = RocksDB.openReadOnly(o, got.toString(), descriptors(co), b)) {
      try (RocksIterator i = x.newIterator(a.get(1));
          RocksIterator j = y.newIterator(b.get(1))) {
        long n = 0;
        for (i.seekToFirst(), j.seekToFirst(); i.isValid(); i.next(), j.next(), n++) {
          if (!j.isValid()) {
            return "row " + n + " missing";
          }
          if (!Arrays.equals(i.key(), j.key()) || !Arrays.equals(i.value(), j.value())) {
            return "row " + n + " differs";
          }
        }
        return j.isValid() ? "an extra row after " + n : null;
      } finally {
        a.forEach(ColumnFamilyHandle::close);
        b.forEach(ColumnFamilyHandle::close);
      }
    }
  }
}
