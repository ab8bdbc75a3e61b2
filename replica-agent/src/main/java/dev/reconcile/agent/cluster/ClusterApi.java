package dev.reconcile.agent.cluster;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.function.Supplier;

/**
 * The cluster routes of the agent's HTTP API (docs/operations.md):
 *
 * <ul>
 *   <li>{@code GET /cluster[?rounds=N]}: the members the cluster manager sees, what each published,
 *       which partitions differ from this agent's, the last round and last successful round with
 *       each, members that left, and the last N rounds this agent started (default 50). Behind the
 *       read token like every other read.
 *   <li>{@code GET /ui} (with {@code /ui/status.js}, {@code /ui/status.css}): the status page.
 *       These three are static files with no data in them and are served without a token; the page
 *       asks for the read token (or takes it from {@code #token=...}) and reads {@code /cluster}
 *       with it. A strict Content-Security-Policy allows only the agent's own script and
 *       connections.
 * </ul>
 */
public final class ClusterApi {
  static final String CSP =
      "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self';"
          + " base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

  private ClusterApi() {}

  /** The status page's static files; mount before the token check. */
  public static void mountPage(Router r) {
    Buffer html = resource("status.html");
    Buffer js = resource("status.js");
    Buffer css = resource("status.css");
    r.get("/ui").handler(ctx -> file(ctx, "text/html; charset=utf-8", html));
    r.get("/ui/").handler(ctx -> ctx.redirect("/ui"));
    r.get("/ui/status.js").handler(ctx -> file(ctx, "text/javascript; charset=utf-8", js));
    r.get("/ui/status.css").handler(ctx -> file(ctx, "text/css; charset=utf-8", css));
  }

  /** {@code GET /cluster}; mount after the token check. {@code mode} is null when it is off. */
  public static void mountData(Router r, Supplier<ClusterMode> mode) {
    r.get("/cluster").handler(ctx -> cluster(ctx, mode.get()));
  }

  private static void cluster(RoutingContext ctx, ClusterMode mode) {
    if (mode == null) {
      json(
          ctx,
          404,
          new JsonObject()
              .put("error", "cluster mode is off on this agent (set cluster-listen)")
              .encodePrettily());
      return;
    }
    int rounds;
    try {
      rounds = Integer.parseInt(ctx.request().getParam("rounds", "50"));
    } catch (NumberFormatException e) {
      json(ctx, 400, new JsonObject().put("error", "rounds is not a number").encodePrettily());
      return;
    }
    Context here = Vertx.currentContext();
    mode.view(rounds)
        .onComplete(
            ar ->
                here.runOnContext(
                    v -> {
                      if (ar.succeeded()) {
                        json(ctx, 200, ar.result().encodePrettily());
                      } else {
                        json(
                            ctx,
                            503,
                            new JsonObject()
                                .put("error", "cluster view: " + ar.cause().getMessage())
                                .encodePrettily());
                      }
                    }));
  }

  private static void json(RoutingContext ctx, int status, String body) {
    if (ctx.response().ended()) {
      return;
    }
    ctx.response()
        .setStatusCode(status)
        .putHeader("content-type", "application/json")
        .putHeader("cache-control", "no-store")
        .end(body);
  }

  private static void file(RoutingContext ctx, String type, Buffer body) {
    ctx.response()
        .putHeader("content-type", type)
        .putHeader("content-security-policy", CSP)
        .putHeader("x-content-type-options", "nosniff")
        .putHeader("x-frame-options", "DENY")
        .putHeader("referrer-policy", "no-referrer")
        .putHeader("cache-control", "no-cache")
        .end(body);
  }

  private static Buffer resource(String name) {
    try (InputStream in = ClusterApi.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + name);
      }
      return Buffer.buffer(in.readAllBytes());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
