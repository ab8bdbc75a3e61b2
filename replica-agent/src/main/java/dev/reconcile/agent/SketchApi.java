package dev.reconcile.agent;

import dev.reconcile.agent.store.ReplicaStore;
import dev.reconcile.core.DifferenceEstimator;
import dev.reconcile.core.ElementCursor;
import dev.reconcile.core.Estimate;
import dev.reconcile.core.Fingerprint;
import dev.reconcile.core.FormatException;
import dev.reconcile.core.IbltShape;
import dev.reconcile.core.LongList;
import dev.reconcile.core.PartitionSketches;
import dev.reconcile.core.RecordBatches;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.Wire;
import dev.reconcile.core.wire.Estimator;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * Read-only views of the agent's sketches over HTTP, so that {@code reconcile diff} and {@code
 * estimate} can run the reconciliation session in the CLI with a live agent as one side (the CLI's
 * {@code RemoteSketches} is the client). Binary bodies: protobuf messages of the wire format or
 * packed 8-byte little-endian elements ({@link Wire#packLongs}). GETs need the read token, POSTs
 * the admin token (the router's rule for any non-GET). Store calls run on worker threads.
 *
 * <ul>
 *   <li>{@code GET /sketch/params}: {@code SketchParams} proto.
 *   <li>{@code GET /sketch/fingerprints}: every partition's fingerprint ({@link
 *       Wire#packFingerprints}).
 *   <li>{@code GET /sketch/estimator?partitions=P,Q,...}: the merged estimator of those partitions
 *       ({@code Estimator} proto).
 *   <li>{@code POST /sketch/estimate?partitions=...}, body an {@code Estimator} proto: JSON {@code
 *       {"estimate": N}}, the merged local estimator's estimate against it.
 *   <li>{@code GET /sketch/iblt?partition=P&base=B&log2=L}: the folded table ({@code Iblt} proto).
 *   <li>{@code GET /sketch/contains?partition=P&element=E} (E unsigned decimal): JSON {@code
 *       {"present": true|false}}.
 *   <li>{@code GET /sketch/elements?partition=P}: the partition's elements, unsigned ascending,
 *       packed (buffered per partition: 8 B per element).
 *   <li>{@code POST /sketch/records[?partition=P]}, body packed elements: a {@code RecordBatch}
 *       proto of the current records with those elements (every partition searched when P is
 *       absent).
 * </ul>
 */
final class SketchApi {
  private static final long MAX_ELEMENTS_BODY = 64L << 20;

  private final Vertx vertx;
  private final ReplicaStore store;

  SketchApi(ReplicaAgent agent) {
    this.vertx = agent.vertx();
    this.store = agent.store();
  }

  /** Adds the routes; call after the authentication handler. */
  void mount(Router r) {
    r.get("/sketch/params")
        .handler(ctx -> binary(ctx, () -> sketches().params().toProto().toByteArray()));
    r.get("/sketch/fingerprints").handler(ctx -> binary(ctx, this::fingerprints));
    r.get("/sketch/estimator")
        .handler(ctx -> binary(ctx, () -> merged(ctx).toProto().toByteArray()));
    r.post("/sketch/estimate")
        .handler(BodyHandler.create().setBodyLimit(64L << 20))
        .handler(this::estimate);
    r.get("/sketch/iblt").handler(ctx -> binary(ctx, () -> iblt(ctx)));
    r.get("/sketch/contains").handler(this::contains);
    r.get("/sketch/elements")
        .handler(ctx -> binary(ctx, () -> elements(partition(ctx, "partition"))));
    r.post("/sketch/records")
        .handler(BodyHandler.create().setBodyLimit(MAX_ELEMENTS_BODY))
        .handler(this::records);
  }

  private PartitionSketches sketches() {
    return store.sketches();
  }

  private byte[] fingerprints() {
    int n = sketches().params().partitions();
    Fingerprint[] fps = new Fingerprint[n];
    for (int p = 0; p < n; p++) {
      fps[p] = sketches().fingerprint(p);
    }
    return Wire.packFingerprints(fps).toByteArray();
  }

  private DifferenceEstimator merged(RoutingContext ctx) {
    String list = ctx.request().getParam("partitions");
    if (list == null || list.isBlank()) {
      throw new IllegalArgumentException("partitions=P,Q,... is required");
    }
    DifferenceEstimator sum = null;
    for (String s : list.split(",")) {
      int p = checked(s.trim(), "partitions");
      DifferenceEstimator e = sketches().estimator(p);
      if (sum == null) {
        sum = e;
      } else {
        sum.merge(e);
      }
    }
    return sum;
  }

  private void estimate(RoutingContext ctx) {
    Buffer body = ctx.body().buffer();
    run(
        ctx,
        () -> {
          Estimator remote;
          try {
            remote = Estimator.parseFrom(body == null ? new byte[0] : body.getBytes());
          } catch (com.google.protobuf.InvalidProtocolBufferException e) {
            throw new IllegalArgumentException(
                "body is not an Estimator message: " + e.getMessage());
          }
          try {
            Estimate e = merged(ctx).estimate(remote);
            return new JsonObject().put("estimate", e.value()).put("exact", e.exact());
          } catch (FormatException e) {
            throw new IllegalArgumentException("estimator: " + e.getMessage());
          }
        });
  }

  private byte[] iblt(RoutingContext ctx) {
    int p = partition(ctx, "partition");
    IbltShape shape =
        new IbltShape(
            sketches().params().ibltHashCount(), intParam(ctx, "base"), intParam(ctx, "log2"));
    if (!sketches().params().allows(shape)) {
      throw new IllegalArgumentException(
          "shape " + shape + " cannot be folded from the maintained tables");
    }
    return Wire.toProto(sketches().iblt(p, shape)).toByteArray();
  }

  private void contains(RoutingContext ctx) {
    run(
        ctx,
        () -> {
          int p = partition(ctx, "partition");
          String e = ctx.request().getParam("element");
          if (e == null) {
            throw new IllegalArgumentException("element=E (unsigned decimal) is required");
          }
          long x;
          try {
            x = Long.parseUnsignedLong(e);
          } catch (NumberFormatException ex) {
            throw new IllegalArgumentException(
                "element '" + e + "' is not an unsigned 64-bit decimal");
          }
          return new JsonObject().put("present", sketches().contains(p, x));
        });
  }

  private byte[] elements(int p) {
    LongList l = new LongList(1024);
    try (ElementCursor c = sketches().sortedElements(p)) {
      while (c.next()) {
        l.add(c.element());
      }
    }
    long[] a = new long[l.size()];
    for (int i = 0; i < a.length; i++) {
      a[i] = l.get(i);
    }
    return Wire.packLongs(a, 0, a.length).toByteArray();
  }

  private void records(RoutingContext ctx) {
    Buffer body = ctx.body().buffer();
    binary(
        ctx,
        () -> {
          byte[] b = body == null ? new byte[0] : body.getBytes();
          if (b.length % 8 != 0) {
            throw new IllegalArgumentException(
                "body of " + b.length + " bytes is not packed 8-byte elements");
          }
          long[] elements = Wire.unpackLongsUnchecked(com.google.protobuf.ByteString.copyFrom(b));
          Arrays.sort(elements);
          String one = ctx.request().getParam("partition");
          List<ReplicaRecord> out = new ArrayList<>();
          if (one != null) {
            out.addAll(store.recordsFor(partition(ctx, "partition"), elements));
          } else {
            for (int p = 0; p < sketches().params().partitions(); p++) {
              out.addAll(store.recordsFor(p, elements));
            }
          }
          return RecordBatches.batch(one == null ? -1 : partition(ctx, "partition"), 0, out)
              .toByteArray();
        });
  }

  // ------------------------------------------------------------------------------------ helpers

  private int partition(RoutingContext ctx, String name) {
    String s = ctx.request().getParam(name);
    if (s == null) {
      throw new IllegalArgumentException(name + "=P is required");
    }
    return checked(s, name);
  }

  private int checked(String s, String name) {
    int p;
    try {
      p = Integer.parseInt(s);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + ": '" + s + "' is not a number");
    }
    int n = sketches().params().partitions();
    if (p < 0 || p >= n) {
      throw new IllegalArgumentException(name + ": partition " + p + " outside [0, " + n + ")");
    }
    return p;
  }

  private static int intParam(RoutingContext ctx, String name) {
    String s = ctx.request().getParam(name);
    try {
      return Integer.parseInt(s);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + "=N is required (got " + s + ")");
    }
  }

  private void binary(RoutingContext ctx, Callable<byte[]> body) {
    vertx
        .executeBlocking(body, false)
        .onSuccess(
            b ->
                ctx.response()
                    .putHeader("content-type", "application/octet-stream")
                    .end(Buffer.buffer(b)))
        .onFailure(t -> fail(ctx, t));
  }

  private void run(RoutingContext ctx, Callable<JsonObject> body) {
    vertx
        .executeBlocking(body, false)
        .onSuccess(
            j -> ctx.response().putHeader("content-type", "application/json").end(j.encode()))
        .onFailure(t -> fail(ctx, t));
  }

  private static void fail(RoutingContext ctx, Throwable t) {
    int status = t instanceof IllegalArgumentException ? 400 : 500;
    ctx.response()
        .setStatusCode(status)
        .putHeader("content-type", "application/json")
        .end(AdminApi.error(String.valueOf(t.getMessage())).encode());
  }
}
