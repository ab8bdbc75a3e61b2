package dev.reconcile.agent.security;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A fault-injecting TCP proxy on loopback for tests: forwards length-prefixed frames between a
 * client and {@code 127.0.0.1:targetPort}, lets a {@link Rewriter} change each frame body in
 * flight, and keeps a copy of every byte seen in both directions.
 */
final class TcpProxy implements AutoCloseable {
  /**
   * Rewrites one frame body; {@code toTarget} is the client-to-target direction, {@code index}
   * counts per direction.
   */
  @FunctionalInterface
  interface Rewriter {
    byte[] rewrite(boolean toTarget, int index, byte[] body);
  }

  private final ServerSocket server;
  private final int targetPort;
  private final Rewriter rewriter;
  private final ByteArrayOutputStream captured = new ByteArrayOutputStream();
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();

  TcpProxy(int targetPort, Rewriter rewriter) throws IOException {
    this.server = new ServerSocket(0, 16, InetAddress.getLoopbackAddress());
    this.targetPort = targetPort;
    this.rewriter = rewriter == null ? (d, i, b) -> b : rewriter;
    Thread t = new Thread(this::acceptLoop, "proxy-accept");
    t.setDaemon(true);
    t.start();
  }

  int port() {
    return server.getLocalPort();
  }

  /** Every byte forwarded so far, both directions. */
  synchronized byte[] captured() {
    return captured.toByteArray();
  }

  private void acceptLoop() {
    while (!server.isClosed()) {
      try {
        Socket client = server.accept();
        Socket target = new Socket(InetAddress.getLoopbackAddress(), targetPort);
        sockets.add(client);
        sockets.add(target);
        pump(client, target, true);
        pump(target, client, false);
      } catch (IOException e) {
        return;
      }
    }
  }

  private void pump(Socket from, Socket to, boolean toTarget) {
    Thread t =
        new Thread(
            () -> {
              try {
                DataInputStream in = new DataInputStream(from.getInputStream());
                OutputStream out = to.getOutputStream();
                for (int i = 0; ; i++) {
                  int n = in.readInt();
                  if (n < 0 || n > (64 << 20)) {
                    throw new IOException("frame of " + n + " bytes");
                  }
                  byte[] body = new byte[n];
                  in.readFully(body);
                  byte[] b = rewriter.rewrite(toTarget, i, body);
                  byte[] frame = ByteBuffer.allocate(4 + b.length).putInt(b.length).put(b).array();
                  synchronized (this) {
                    captured.write(frame);
                  }
                  out.write(frame);
                  out.flush();
                }
              } catch (EOFException e) {
                // orderly end
              } catch (IOException e) {
                // connection reset or closed
              } finally {
                try {
                  to.shutdownOutput();
                } catch (IOException e) {
                  // already closed
                }
              }
            },
            "proxy-" + (toTarget ? "up" : "down"));
    t.setDaemon(true);
    t.start();
  }

  @Override
  public void close() throws IOException {
    server.close();
    for (Socket s : sockets) {
      s.close();
    }
  }
}
