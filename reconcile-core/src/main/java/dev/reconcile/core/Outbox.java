package dev.reconcile.core;

import dev.reconcile.core.wire.Envelope;
import java.util.ArrayDeque;

/**
 * The frames a session has yet to send, in order: single frames and lazy streams (digest lists,
 * result lists, record batches) that produce theirs one at a time. Acknowledgements and refusals
 * take an urgent lane ahead of everything, so that a stream waiting for the peer's acknowledgements
 * never holds back this side's own.
 */
final class Outbox {
  /** A long run of frames made when polled. */
  interface Stream {
    /**
     * The next frame, or null when there is none now: either the stream is {@link #finished()} or
     * it waits for the peer (a full window).
     */
    Envelope.Builder next();

    boolean finished();

    /** Releases what the stream holds (a cursor) when the session ends before it finished. */
    default void close() {}
  }

  private final ArrayDeque<Envelope.Builder> urgent = new ArrayDeque<>();
  private final ArrayDeque<Object> queue = new ArrayDeque<>();

  void add(Envelope.Builder frame) {
    queue.add(frame);
  }

  void add(Stream stream) {
    queue.add(stream);
  }

  void addUrgent(Envelope.Builder frame) {
    urgent.add(frame);
  }

  /** The next frame to send, or null when nothing can be sent now. */
  Envelope.Builder next() {
    if (!urgent.isEmpty()) {
      return urgent.poll();
    }
    while (!queue.isEmpty()) {
      Object head = queue.peek();
      if (head instanceof Envelope.Builder b) {
        queue.poll();
        return b;
      }
      Stream s = (Stream) head;
      Envelope.Builder b = s.next();
      if (b != null) {
        return b;
      }
      if (!s.finished()) {
        return null; // waits for the peer
      }
      queue.poll();
    }
    return null;
  }

  boolean isEmpty() {
    return urgent.isEmpty() && queue.isEmpty();
  }

  /**
   * Drops every pending frame and closes unfinished streams. The outbox is empty and every stream's
   * close was called even if one throws; the first exception is then rethrown with the others
   * suppressed.
   */
  void clear() {
    urgent.clear();
    Object[] pending = queue.toArray();
    queue.clear();
    RuntimeException first = null;
    for (Object o : pending) {
      if (o instanceof Stream s) {
        first = Releases.run(s::close, first);
      }
    }
    Releases.rethrow(first);
  }
}
