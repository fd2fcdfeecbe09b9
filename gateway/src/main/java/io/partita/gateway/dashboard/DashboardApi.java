package io.partita.gateway.dashboard;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.partita.common.Topics;
import io.partita.common.health.Loop;
import io.partita.common.serde.Codecs;
import io.partita.gateway.auth.ApiKeys;
import io.partita.gateway.server.HttpStatus;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.SortedMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dashboard's HTTP surface, free of any HTTP server: a transport adapter turns a call into a
 * {@link Request}, writes the {@link Response}, and for the live stream hands over an
 * {@link EventSink}.
 *
 * <pre>
 *   GET  /                                  302 to /dashboard/ (hooked in the gateway's router)
 *   GET  /dashboard/                        the page (index.html, app.js, style.css, vendor/uPlot)
 *   GET  /dashboard/api/session.json        whether a key is needed, the views, the reader's state
 *   GET  /dashboard/api/VIEW.json           overview, hosts, timings, plan, traffic, jobs, deadletters
 *   GET  /dashboard/api/events              server-sent events: one event per view when it changes
 *   POST /dashboard/api/whatif              body: inventory YAML; the plan it would give and the live one
 * </pre>
 *
 * With API keys configured every {@code api/} call needs one ({@code Authorization: Bearer}); the
 * views leave out the service models the key may not use, and dead letters are shown only to a key
 * that may use every service model. Static files need no key. {@code whatif} blocks for the replay
 * (seconds): a transport must call it off its event loop; one runs at a time (429 otherwise).
 */
public final class DashboardApi {
  private static final Logger log = LoggerFactory.getLogger(DashboardApi.class);
  static final int MAX_INVENTORY_BYTES = 1 << 20;
  private static final Map<String, String> STATIC = Map.of(
      "index.html", "text/html; charset=utf-8",
      "app.js", "text/javascript; charset=utf-8",
      "style.css", "text/css; charset=utf-8");
  private static final Map<String, String> VENDOR = Map.of(
      "uPlot.iife.min.js", "text/javascript; charset=utf-8",
      "uPlot.min.css", "text/css; charset=utf-8");
  private static final Map<String, String> SECURITY_HEADERS = Map.of(
      "Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
          + "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'",
      "X-Content-Type-Options", "nosniff",
      "Cache-Control", "no-cache");

  /** One HTTP call as the dashboard needs it; {@code body} is read only by what-if. */
  public record Request(String method, String path, String authorization, String xApiKey, Supplier<InputStream> body) {}

  /** An answer: status, content type, body and extra headers. */
  public record Response(int status, String contentType, byte[] body, Map<String, String> headers) {}

  private final Views views;
  private final ApiKeys keys;
  private final Set<String> serviceModels;
  private final Loop reader;
  private final Optional<WhatIf> whatIf;
  private final Topics topics;
  private final Codecs codecs;
  private final Semaphore whatIfRunning = new Semaphore(1);
  private final List<Subscriber> subscribers = new CopyOnWriteArrayList<>();
  private final String uplotVersion;

  DashboardApi(Views views, ApiKeys keys, Set<String> serviceModels, Loop reader, Optional<WhatIf> whatIf, Topics topics,
      Codecs codecs) {
    this.views = views;
    this.keys = keys;
    this.serviceModels = Set.copyOf(serviceModels);
    this.reader = reader;
    this.whatIf = whatIf;
    this.topics = topics;
    this.codecs = codecs;
    this.uplotVersion = webjarVersion("uplot");
  }

  /** Answers every path under {@code /dashboard} but the event stream. */
  public Response handle(Request r) {
    String path = r.path();
    if (path.equals("/dashboard")) {
      return new Response(302, "text/plain; charset=utf-8", new byte[0], Map.of("Location", "/dashboard/"));
    }
    if (!path.startsWith("/dashboard/")) {
      return error(404, "no such dashboard path");
    }
    String rest = path.substring("/dashboard/".length());
    try {
      if (rest.startsWith("api/")) {
        return api(r, rest.substring(4));
      }
      if (!r.method().equals("GET") && !r.method().equals("HEAD")) {
        return error(405, "the dashboard's files take GET");
      }
      if (rest.isEmpty()) {
        rest = "index.html";
      }
      if (STATIC.containsKey(rest)) {
        return resource("dashboard/" + rest, STATIC.get(rest));
      }
      if (rest.startsWith("vendor/") && VENDOR.containsKey(rest.substring(7)) && uplotVersion != null) {
        return resource("META-INF/resources/webjars/uplot/" + uplotVersion + "/dist/" + rest.substring(7), VENDOR.get(rest.substring(7)));
      }
      return error(404, "no such dashboard file: " + rest);
    } catch (RuntimeException e) {
      log.error("Dashboard call {} {} failed", r.method(), path, e);
      return error(500, "internal error; see the gateway log");
    }
  }

  private Response api(Request r, String name) {
    ApiKeys.Decision decision = keys.check(key(r), null);
    if (name.equals("session.json")) {
      ObjectNode out = Views.JSON.createObjectNode().put("keyRequired", !keys.isOpen())
          .put("authorized", decision.allowed());
      if (!decision.allowed()) { // a probe, so 200: the page asks for a key without a failed request in its console
        out.put("error", decision.message());
        return json(200, out);
      }
      out.putArray("views").addAll(Views.NAMES.stream().map(n -> Views.JSON.getNodeFactory().textNode(n)).toList());
      out.put("whatIf", whatIf.isPresent());
      Loop.Snapshot s = reader.snapshot();
      out.putObject("reader").put("state", s.state().name()).put("reason", s.reason());
      out.put("topicPrefix", topics.prefix());
      return json(200, out);
    }
    if (!decision.allowed()) {
      return error(HttpStatus.of(decision.kind()), decision.message());
    }
    Views.Viewer viewer = viewer(key(r));
    if (name.equals("whatif")) {
      if (!r.method().equals("POST")) {
        return error(405, "whatif takes POST with an inventory (YAML) as the body");
      }
      return whatIf(r);
    }
    if (!r.method().equals("GET") && !r.method().equals("HEAD")) {
      return error(405, "this endpoint takes GET");
    }
    if (name.endsWith(".json") && Views.NAMES.contains(name.substring(0, name.length() - 5))) {
      return json(200, views.view(name.substring(0, name.length() - 5), viewer));
    }
    return error(404, "no such dashboard endpoint: api/" + name + "; views: " + Views.NAMES);
  }

  /**
   * Opens the live stream: refuses (the returned response) without a valid key, or calls
   * {@code open} (the transport sends the 200 and the event-stream headers) and returns null. The
   * first push sends every view; later pushes send the views that changed.
   */
  public Response events(Request r, Supplier<EventSink> open) {
    ApiKeys.Decision decision = keys.check(key(r), null);
    if (!decision.allowed()) {
      return error(HttpStatus.of(decision.kind()), decision.message());
    }
    if (!r.method().equals("GET")) {
      return error(405, "the event stream takes GET");
    }
    Subscriber s = new Subscriber(open.get(), viewer(key(r)), key(r));
    subscribers.add(s);
    s.sink.onClose(() -> subscribers.remove(s));
    return null;
  }

  /**
   * Sends every open stream the views that changed since its last push; called by the push thread.
   *
   * @param topicsChanged false when no record was read since the last push: only the traffic view
   *     (which moves with the gateway's own calls) and the reader's state are built again
   */
  void push(long nowMs, boolean topicsChanged) {
    Map<String, Map<String, String>> byKey = new HashMap<>();
    for (Subscriber s : subscribers) {
      Map<String, String> current = byKey.computeIfAbsent(String.valueOf(s.key), k -> render(s.viewer, topicsChanged ? null : s.lastSent));
      boolean alive = true;
      boolean sent = false;
      for (Map.Entry<String, String> e : current.entrySet()) {
        if (!e.getValue().equals(s.lastSent.get(e.getKey()))) {
          alive = s.sink.send(e.getKey(), e.getValue());
          if (!alive) {
            break;
          }
          s.lastSent.put(e.getKey(), e.getValue());
          sent = true;
        }
      }
      if (alive && !sent && nowMs - s.lastPushMs > 15_000) {
        alive = s.sink.send("ping", "{}"); // finds streams whose client went away
        sent = alive;
      }
      if (sent) {
        s.lastPushMs = nowMs;
      }
      if (!alive) {
        subscribers.remove(s);
      }
    }
  }

  int subscribers() {
    return subscribers.size();
  }

  private Map<String, String> render(Views.Viewer viewer, Map<String, String> unchanged) {
    Map<String, String> out = new LinkedHashMap<>();
    for (String name : Views.NAMES) {
      // traffic and the overview move with the gateway's own calls (and the overview with time)
      boolean live = name.equals("traffic") || name.equals("overview");
      String before = unchanged == null || live ? null : unchanged.get(name);
      out.put(name, before != null ? before : write(views.view(name, viewer)));
    }
    Loop.Snapshot s = reader.snapshot();
    out.put("reader", write(Views.JSON.createObjectNode().put("state", s.state().name()).put("reason", s.reason())));
    return out;
  }

  private Response whatIf(Request r) {
    if (whatIf.isEmpty()) {
      return error(501, "what-if planning is not available in this gateway: it needs the planner on the class path "
          + "(run the gateway from the partita launcher, or use 'partita replay --inventory FILE')");
    }
    byte[] body;
    try (InputStream in = r.body().get()) {
      body = in.readNBytes(MAX_INVENTORY_BYTES + 1);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    if (body.length > MAX_INVENTORY_BYTES) {
      return error(413, "inventory over " + MAX_INVENTORY_BYTES + " bytes");
    }
    if (!whatIfRunning.tryAcquire()) {
      return error(429, "a what-if plan is already being made; try again when it is done");
    }
    try {
      Map<String, SortedMap<String, byte[]>> tables = whatIf.get().plan(new String(body, StandardCharsets.UTF_8));
      DashboardState replayed = new DashboardState(topics, codecs, 0);
      tables.forEach((topic, rows) -> rows.forEach((key, value) -> replayed.apply(topic, key, value, 0, 0)));
      ObjectNode out = Views.JSON.createObjectNode();
      out.set("whatIf", Views.plan(replayed));
      out.set("live", views.plan());
      return json(200, out);
    } catch (IllegalArgumentException e) {
      return error(400, "inventory: " + e.getMessage());
    } finally {
      whatIfRunning.release();
    }
  }

  private Views.Viewer viewer(String key) {
    if (keys.isOpen()) {
      return new Views.Viewer(m -> true, true);
    }
    return new Views.Viewer(m -> keys.check(key, m).allowed(),
        serviceModels.stream().allMatch(m -> keys.check(key, m).allowed()));
  }

  private static String key(Request r) {
    return ApiKeys.presented(r.authorization(), r.xApiKey());
  }

  private static Response json(int status, ObjectNode body) {
    return new Response(status, "application/json", write(body).getBytes(StandardCharsets.UTF_8), SECURITY_HEADERS);
  }

  private static Response error(int status, String message) {
    return json(status, Views.JSON.createObjectNode().put("error", message));
  }

  private static String write(ObjectNode node) {
    try {
      return Views.JSON.writeValueAsString(node);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Response resource(String name, String contentType) {
    try (InputStream in = DashboardApi.class.getClassLoader().getResourceAsStream(name)) {
      if (in == null) {
        return error(404, "no such dashboard file");
      }
      return new Response(200, contentType, in.readAllBytes(), SECURITY_HEADERS);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The version of a WebJar on the class path (from its Maven properties), or null. */
  static String webjarVersion(String artifact) {
    try (InputStream in = DashboardApi.class.getClassLoader()
        .getResourceAsStream("META-INF/maven/org.webjars.npm/" + artifact + "/pom.properties")) {
      if (in == null) {
        return null;
      }
      Properties p = new Properties();
      p.load(in);
      return p.getProperty("version");
    } catch (IOException e) {
      return null;
    }
  }

  private static final class Subscriber {
    final EventSink sink;
    final Views.Viewer viewer;
    final String key;
    final Map<String, String> lastSent = new HashMap<>();
    volatile long lastPushMs;

    Subscriber(EventSink sink, Views.Viewer viewer, String key) {
      this.sink = sink;
      this.viewer = viewer;
      this.key = key;
    }
  }
}
