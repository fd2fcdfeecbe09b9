package io.partita.gateway.dashboard;

import io.partita.gateway.server.Exchange;
import io.partita.gateway.server.HttpFrontDoor;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dashboard ({@link DashboardApi}, which knows no HTTP server) on the gateway's Vert.x front
 * door ({@link HttpFrontDoor}): requests under {@code /dashboard} go to it, every other request to
 * {@code next}; the one class of the dashboard that touches the transport. The live event stream
 * is a chunked answer whose frames ({@code event:}/{@code data:}) are flushed one by one; a client
 * that goes away ends it at the next frame.
 */
public final class DashboardDoor implements HttpFrontDoor.Handler {
  private static final Logger log = LoggerFactory.getLogger(DashboardDoor.class);

  private final DashboardApi api;
  private final HttpFrontDoor.Handler next;

  public DashboardDoor(DashboardApi api, HttpFrontDoor.Handler next) {
    this.api = api;
    this.next = next;
  }

  @Override
  public void handle(Exchange exchange) {
    String path = exchange.getRequestURI().getPath();
    if (path == null || !(path.equals("/dashboard") || path.startsWith("/dashboard/"))) {
      next.handle(exchange);
      return;
    }
    byte[] body = exchange.body();
    DashboardApi.Request request = new DashboardApi.Request(exchange.getRequestMethod(), path,
        exchange.getRequestHeaders().getFirst("Authorization"), exchange.getRequestHeaders().getFirst("X-API-Key"),
        () -> new ByteArrayInputStream(body));
    try {
      if (path.equals("/dashboard/api/events")) {
        DashboardApi.Response refused = api.events(request, () -> open(exchange));
        if (refused != null) {
          write(exchange, refused);
        }
        return;
      }
      write(exchange, api.handle(request));
    } catch (RuntimeException e) {
      log.error("Dashboard request {} {} failed", exchange.getRequestMethod(), path, e);
      exchange.send(500, "text/plain; charset=utf-8", "internal error; see the gateway log".getBytes(StandardCharsets.UTF_8));
    }
  }

  private static void write(Exchange exchange, DashboardApi.Response response) {
    response.headers().forEach((k, v) -> exchange.getResponseHeaders().set(k, v));
    exchange.send(response.status(), response.contentType(), response.body());
  }

  /** Starts the event stream: headers now, frames from the dashboard's push thread. */
  private static EventSink open(Exchange exchange) {
    exchange.getResponseHeaders().set("Cache-Control", "no-cache");
    exchange.getResponseHeaders().set("X-Accel-Buffering", "no");
    OutputStream out = exchange.stream(200, "text/event-stream; charset=utf-8");
    return new EventSink() {
      private final List<Runnable> onClose = new CopyOnWriteArrayList<>();
      private final AtomicBoolean closed = new AtomicBoolean();

      @Override
      public boolean send(String event, String json) {
        if (closed.get()) {
          return false;
        }
        try {
          out.write(("event: " + event + "\ndata: " + json + "\n\n").getBytes(StandardCharsets.UTF_8));
          out.flush();
          return true;
        } catch (IOException | RuntimeException e) {
          log.debug("Event stream ended: {}", e.toString());
          close();
          return false;
        }
      }

      @Override
      public void onClose(Runnable action) {
        onClose.add(action);
      }

      private void close() {
        if (closed.compareAndSet(false, true)) {
          try {
            out.close();
          } catch (IOException e) {
            log.debug("Closing an event stream: {}", e.toString());
          }
          onClose.forEach(Runnable::run);
        }
      }
    };
  }
}
