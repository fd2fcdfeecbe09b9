package io.partita.gateway.dashboard;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link DashboardApi} over the JDK's {@code com.sun.net.httpserver}, mounted on {@code /dashboard}.
 * The only class of the dashboard that knows the HTTP server: porting the dashboard to another
 * server means writing this adapter again (a request in, a response out, and an {@link EventSink}
 * that writes {@code event:}/{@code data:} frames and flushes).
 */
public final class SunHttpAdapter implements HttpHandler {
  private static final Logger log = LoggerFactory.getLogger(SunHttpAdapter.class);

  private final DashboardApi api;

  public SunHttpAdapter(DashboardApi api) {
    this.api = api;
  }

  @Override
  public void handle(HttpExchange exchange) throws IOException {
    DashboardApi.Request request = new DashboardApi.Request(exchange.getRequestMethod(), exchange.getRequestURI().getPath(),
        exchange.getRequestHeaders().getFirst("Authorization"), exchange.getRequestHeaders().getFirst("X-API-Key"),
        exchange::getRequestBody);
    if (request.path().equals("/dashboard/api/events")) {
      DashboardApi.Response refused = api.events(request, () -> open(exchange));
      if (refused != null) {
        write(exchange, refused);
      }
      return;
    }
    write(exchange, api.handle(request));
  }

  private static void write(HttpExchange exchange, DashboardApi.Response response) throws IOException {
    try (exchange) {
      response.headers().forEach((k, v) -> exchange.getResponseHeaders().set(k, v));
      exchange.getResponseHeaders().set("Content-Type", response.contentType());
      boolean head = exchange.getRequestMethod().equals("HEAD");
      exchange.sendResponseHeaders(response.status(), head || response.body().length == 0 ? -1 : response.body().length);
      if (!head && response.body().length > 0) {
        exchange.getResponseBody().write(response.body());
      }
    }
  }

  /** Starts the event stream: headers now, frames from the dashboard's push thread. */
  private static EventSink open(HttpExchange exchange) {
    try {
      exchange.getResponseHeaders().set("Content-Type", "text/event-stream; charset=utf-8");
      exchange.getResponseHeaders().set("Cache-Control", "no-cache");
      exchange.getResponseHeaders().set("X-Accel-Buffering", "no");
      exchange.sendResponseHeaders(200, 0);
    } catch (IOException e) {
      log.debug("Event stream client went away at once: {}", e.getMessage());
    }
    OutputStream out = exchange.getResponseBody();
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
          exchange.close();
          onClose.forEach(Runnable::run);
        }
      }
    };
  }
}
