package dev.reconcile.core.fuzz;

import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Seeded input mutations for the fuzz tests of every decoder that reads network or file input:
 * byte-level (bit flips, extreme bytes, truncation, extension, insertion, deletion, duplication,
 * splices, random bytes) and protobuf field-level (a scalar set to an extreme value, a bytes field
 * emptied or grown, a repeated field flooded with entries, a sub-message cleared). Every mutation
 * is a pure function of the {@link SplittableRandom}, so a failing input is reproduced from its
 * seed.
 */
public final class Mutator {
  /** Values that hurt integer fields: zero, one, signs, bounds, shifts near allocation limits. */
  private static final long[] EXTREMES = {
    0,
    1,
    2,
    3,
    7,
    26,
    31,
    32,
    63,
    64,
    255,
    256,
    65_535,
    65_536,
    1 << 20,
    1 << 24,
    1 << 26,
    1 << 30,
    Integer.MAX_VALUE,
    Integer.MIN_VALUE,
    -1,
    -2,
    0xFFFF_FFFFL,
    1L << 32,
    1L << 48,
    Long.MAX_VALUE,
    Long.MIN_VALUE
  };

  private Mutator() {}

  /**
   * Fuzz size multiplier: system property {@code reconcile.fuzz.scale} (1 by default, 100 under
   * -Pfuzz).
   */
  public static int scale() {
    return Math.max(1, Integer.getInteger("reconcile.fuzz.scale", 1));
  }

  /** One random byte-level mutation of {@code in} (never modifies {@code in}). */
  public static byte[] mutateBytes(byte[] in, SplittableRandom r) {
    byte[] b = in;
    int rounds = 1 + (r.nextInt(4) == 0 ? r.nextInt(8) : 0);
    for (int i = 0; i < rounds; i++) {
      b = mutateOnce(b, r);
    }
    return b;
  }

  private static byte[] mutateOnce(byte[] in, SplittableRandom r) {
    int n = in.length;
    switch (r.nextInt(10)) {
      case 0, 1, 2 -> { // bit flips
        if (n == 0) {
          return random(r, 1 + r.nextInt(16));
        }
        byte[] b = in.clone();
        int flips = 1 + r.nextInt(3);
        for (int i = 0; i < flips; i++) {
          int p = r.nextInt(n);
          b[p] ^= (byte) (1 << r.nextInt(8));
        }
        return b;
      }
      case 3 -> { // an extreme byte
        if (n == 0) {
          return new byte[] {(byte) 0xFF};
        }
        byte[] b = in.clone();
        byte[] ext = {0, (byte) 0xFF, 0x7F, (byte) 0x80, 1};
        b[r.nextInt(n)] = ext[r.nextInt(ext.length)];
        return b;
      }
      case 4 -> { // truncation
        return Arrays.copyOf(in, n == 0 ? 0 : r.nextInt(n));
      }
      case 5 -> { // extension with random or repeated bytes
        int extra = 1 + r.nextInt(r.nextInt(8) == 0 ? 4096 : 32);
        byte[] b = Arrays.copyOf(in, n + extra);
        byte fill = (byte) r.nextInt(256);
        boolean same = r.nextBoolean();
        for (int i = n; i < b.length; i++) {
          b[i] = same ? fill : (byte) r.nextInt(256);
        }
        return b;
      }
      case 6 -> { // insertion in the middle
        int p = n == 0 ? 0 : r.nextInt(n + 1);
        byte[] ins = random(r, 1 + r.nextInt(16));
        byte[] b = new byte[n + ins.length];
        System.arraycopy(in, 0, b, 0, p);
        System.arraycopy(ins, 0, b, p, ins.length);
        System.arraycopy(in, p, b, p + ins.length, n - p);
        return b;
      }
      case 7 -> { // deletion of a range
        if (n == 0) {
          return in;
        }
        int p = r.nextInt(n);
        int len = 1 + r.nextInt(Math.min(64, n - p));
        byte[] b = new byte[n - len];
        System.arraycopy(in, 0, b, 0, p);
        System.arraycopy(in, p + len, b, p, n - p - len);
        return b;
      }
      case 8 -> { // duplicate a range in place (repeated fields, nested lengths)
        if (n == 0) {
          return in;
        }
        int p = r.nextInt(n);
        int len = 1 + r.nextInt(Math.min(256, n - p));
        byte[] b = new byte[n + len];
        System.arraycopy(in, 0, b, 0, p + len);
        System.arraycopy(in, p, b, p + len, n - p);
        return b;
      }
      default -> { // random bytes
        return random(r, r.nextInt(r.nextInt(4) == 0 ? 2048 : 64));
      }
    }
  }

  public static byte[] random(SplittableRandom r, int n) {
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) {
      b[i] = (byte) r.nextInt(256);
    }
    return b;
  }

  /**
   * One field-level edit somewhere in {@code m} (nested messages included): a scalar set to an
   * extreme, a bytes field emptied, shortened, grown or replaced, a repeated numeric field flooded
   * (up to 10^6 entries, rarely), a message field cleared.
   */
  @SuppressWarnings("unchecked")
  public static <M extends Message> M mutateFields(M m, SplittableRandom r) {
    return (M) editSomewhere(m, r, 0);
  }

  private static Message editSomewhere(Message m, SplittableRandom r, int depth) {
    List<FieldDescriptor> fields =
        new ArrayList<>(m.getAllFields().keySet()); // mostly edit what is set
    if (fields.isEmpty() || r.nextInt(4) == 0) {
      fields = new ArrayList<>(m.getDescriptorForType().getFields());
    }
    if (fields.isEmpty()) {
      return m;
    }
    FieldDescriptor f = fields.get(r.nextInt(fields.size()));
    Message.Builder b = m.toBuilder();
    if (f.getJavaType() == FieldDescriptor.JavaType.MESSAGE && !f.isRepeated() && depth < 4) {
      if (r.nextInt(5) == 0) {
        b.clearField(f);
      } else {
        Message sub = (Message) m.getField(f);
        b.setField(f, editSomewhere(sub, r, depth + 1));
      }
      return b.build();
    }
    if (f.getJavaType() == FieldDescriptor.JavaType.MESSAGE) {
      // Repeated messages: drop one, duplicate one, or edit one.
      int n = m.getRepeatedFieldCount(f);
      if (n == 0) {
        return m;
      }
      int i = r.nextInt(n);
      Message sub = (Message) m.getRepeatedField(f, i);
      switch (r.nextInt(3)) {
        case 0 -> b.setRepeatedField(f, i, editSomewhere(sub, r, depth + 1));
        case 1 -> b.addRepeatedField(f, sub);
        default -> {
          List<Object> all = new ArrayList<>((List<?>) m.getField(f));
          all.remove(i);
          b.setField(f, all);
        }
      }
      return b.build();
    }
    if (f.isRepeated()) {
      int count = r.nextInt(20) == 0 ? 1_000_000 : 1 + r.nextInt(64);
      b.clearField(f);
      for (int i = 0; i < count; i++) {
        Object v = scalar(f, r, i);
        if (v != null) {
          b.addRepeatedField(f, v);
        }
      }
      return b.build();
    }
    Object v =
        f.getJavaType() == FieldDescriptor.JavaType.BYTE_STRING
            ? bytes((ByteString) m.getField(f), r)
            : scalar(f, r, -1);
    if (v != null) {
      b.setField(f, v);
    }
    return b.build();
  }

  private static ByteString bytes(ByteString cur, SplittableRandom r) {
    return switch (r.nextInt(5)) {
      case 0 -> ByteString.EMPTY;
      case 1 -> cur.isEmpty() ? ByteString.EMPTY : cur.substring(0, r.nextInt(cur.size()));
      case 2 -> cur.concat(ByteString.copyFrom(random(r, 1 + r.nextInt(64))));
      case 3 -> ByteString.copyFrom(mutateBytes(cur.toByteArray(), r));
      default -> ByteString.copyFrom(random(r, r.nextInt(4) == 0 ? 1 << 20 : r.nextInt(256)));
    };
  }

  /** An extreme value of the field's type ({@code i >= 0}: the i-th entry of a flood). */
  private static Object scalar(FieldDescriptor f, SplittableRandom r, int i) {
    long x = i >= 0 && r.nextBoolean() ? i : EXTREMES[r.nextInt(EXTREMES.length)];
    return switch (f.getJavaType()) {
      case INT -> (int) x;
      case LONG -> x;
      case BOOLEAN -> (x & 1) == 1;
      case FLOAT -> (float) x;
      case DOUBLE -> (double) x;
      case STRING -> r.nextBoolean() ? "" : "x".repeat(r.nextInt(4) == 0 ? 100_000 : r.nextInt(70));
      case BYTE_STRING -> ByteString.copyFrom(random(r, r.nextInt(64)));
      case ENUM -> {
        var values = f.getEnumType().getValues();
        yield values.get(r.nextInt(values.size()));
      }
      default -> null;
    };
  }
}
