package dev.reconcile.cli.replay;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * A fault-injecting TCP proxy on loopback in front of one agent's peer port, for one direction of
 * one link (replica x connecting to replica y). Faults: {@code partition} (resets open connections,
 * refuses new ones with a reset), {@code blackhole} (accepts and holds bytes without forwarding
 * until healed), {@code delay} (milliseconds added before each forwarded chunk), {@code reset} (one
 * shot: resets the connections once the link has carried N more bytes: a reset in the middle of a
 * stream). Plain blocking sockets with two threads per connection: the test clusters are small. The
 * target is looked up on each new connection, so a restarted agent on a new port is reached.
 */
final class FaultProxy implements AutoCloseable {
  enum Mode {
    OPEN,
    PARTITION,
    BLACKHOLE
  }

  private final String name;
  private final Supplier<InetSocketAddress> target;
  private final ServerSocket server;
  private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
  private final AtomicLong bytes = new AtomicLong();
  private volatile Mode mode = Mode.OPEN;
  private volatile long delayMillis;
  private volatile long resetAt = -1;
  private volatile boolean closed;

  FaultProxy(String name, Supplier<InetSocketAddress> target) throws IOException {
    this.name = name;
    this.target = target;
    this.server = new ServerSocket();
    server.setReuseAddress(true);
    server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
    Thread t = new Thread(this::acceptLoop, "proxy-" + name);
    t.setDaemon(true);
    t.start();
  }

  InetSocketAddress address() {
    return new InetSocketAddress(server.getInetAddress(), server.getLocalPort());
  }

  /** Bytes forwarded so far, both directions. */
  long bytes() {
    return bytes.get();
  }

  void partition() {
    mode = Mode.PARTITION;
    resetAll();
  }

  void blackhole() {
    mode = Mode.BLACKHOLE;
  }

  void heal() {
    mode = Mode.OPEN;
    delayMillis = 0;
    resetAt = -1;
  }

  void delay(long millis) {
    delayMillis = millis;
  }

  /** Resets every connection once {@code afterBytes} more bytes have been forwarded. */
  void resetAfter(long afterBytes) {
    resetAt = bytes.get() + afterBytes;
  }

  private void acceptLoop() {
    while (!closed) {
      Socket c;
      try {
        c = server.accept();
      } catch (IOException e) {
        return;
      }
      if (mode == Mode.PARTITION) {
        abort(c);
        continue;
      }
      Socket u = new Socket();
      try {
        c.setTcpNoDelay(true);
        u.setTcpNoDelay(true);
        u.connect(target.get(), 3000);
      } catch (IOException | RuntimeException e) {
        abort(c);
        close(u);
        continue;
      }
      sockets.add(c);
      sockets.add(u);
      java.util.concurrent.atomic.AtomicInteger ended =
          new java.util.concurrent.atomic.AtomicInteger();
      pump(c, u, "up", ended);
      pump(u, c, "down", ended);
    }
  }

  private void pump(
      Socket from, Socket to, String dir, java.util.concurrent.atomic.AtomicInteger ended) {
    Thread t =
        new Thread(
            () -> {
              byte[] buf = new byte[16 * 1024];
              try {
                InputStream in = from.getInputStream();
                OutputStream out = to.getOutputStream();
                int n;
                while ((n = in.read(buf)) > 0) {
                  while (mode == Mode.BLACKHOLE && !closed && !from.isClosed()) {
                    Thread.sleep(20);
                  }
                  if (mode == Mode.PARTITION || closed) {
                    break;
                  }
                  long d = delayMillis;
                  if (d > 0) {
                    Thread.sleep(d);
                  }
                  long total = bytes.addAndGet(n);
                  long r = resetAt;
                  if (r >= 0 && total >= r) {
                    resetAt = -1;
                    resetAll();
                    return;
                  }
                  out.write(buf, 0, n);
                  out.flush();
                }
                to.shutdownOutput();
              } catch (IOException | InterruptedException e) {
                abort(from);
                abort(to);
              } finally {
                if (ended.incrementAndGet() == 2) {
                  sockets.remove(from);
                  sockets.remove(to);
                  close(from);
                  close(to);
                }
              }
            },
            "proxy-" + name + "-" + dir);
    t.setDaemon(true);
    t.start();
  }

  private void resetAll() {
    for (Socket s : sockets) {
      abort(s);
    }
    sockets.clear();
  }

  /** Closes with SO_LINGER 0: the peer sees a connection reset, not an orderly end. */
  private static void abort(Socket s) {
    try {
      s.setSoLinger(true, 0);
    } catch (IOException e) {
      // already closed
    }
    close(s);
  }

  private static void close(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // nothing to do
    }
  }

  @Override
  public void close() {
    closed = true;
    try {
      server.close();
    } catch (IOException e) {
      // nothing to do
    }
    resetAll();
  }
}
