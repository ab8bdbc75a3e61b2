package dev.reconcile.agent;

/** A {@code HOST:PORT} address ({@code [v6]:PORT} for IPv6 literals). */
public record HostPort(String host, int port) {
  public HostPort {
    if (host == null || host.isEmpty()) {
      throw new IllegalArgumentException("empty host");
    }
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("port " + port + " outside [0, 65535]");
    }
  }

  public static HostPort parse(String s) {
    if (s == null) {
      throw new IllegalArgumentException("missing HOST:PORT");
    }
    String t = s.trim();
    int colon = t.lastIndexOf(':');
    if (colon <= 0 || colon == t.length() - 1) {
      throw new IllegalArgumentException("'" + s + "' is not HOST:PORT");
    }
    String host = t.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    int port;
    try {
      port = Integer.parseInt(t.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("'" + s + "': port is not a number");
    }
    return new HostPort(host, port);
  }

  /** True for 127.0.0.0/8, ::1 and localhost. */
  public boolean isLoopback() {
    return host.equals("localhost") || host.startsWith("127.") || host.equals("::1");
  }

  @Override
  public String toString() {
    return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
  }
}
