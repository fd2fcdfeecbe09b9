package io.partita.gateway.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.partita.gateway.metrics.GatewayMetrics;
import io.partita.gateway.oip.InferBody;
import io.partita.gateway.refusal.Refusal;
import io.partita.gateway.refusal.Refusal.Kind;
import io.partita.gateway.server.Exchange;
import io.partita.gateway.server.HttpFrontDoor;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One HTTP call: the exchange, its request id, and what the metrics need (service model, endpoint,
 * start time). It is answered exactly once, from whichever thread finishes the work; the answer is
 * recorded in the metrics then. The transport ({@link HttpFrontDoor}) has received the body before
 * the call is handled, so nothing here waits on a client.
 */
final class Call {
  private static final Logger log = LoggerFactory.getLogger(Call.class);

  final Exchange exchange;
  final String requestId;
  final long start = System.nanoTime();
  private final GatewayMetrics metrics;
  private final AtomicBoolean answered = new AtomicBoolean();
  String model;
  String endpoint;

  Call(Exchange exchange, String requestId, GatewayMetrics metrics) {
    this.exchange = exchange;
    this.requestId = requestId;
    this.metrics = metrics;
  }

  String header(String name) {
    return exchange.getRequestHeaders().getFirst(name);
  }

  String method() {
    return exchange.getRequestMethod();
  }

  /**
   * The body, at most {@code limit} bytes; refused as too large over it (by Content-Length, or by
   * what arrived: the transport stops reading a body at its own limit and says so).
   */
  byte[] body(long limit, String setting) throws IOException {
    if (exchange.bodyOverLimit()) {
      throw new Refusal(Kind.TOO_LARGE, "body over the limit of " + limit + " bytes (" + setting + ")");
    }
    String length = header("Content-Length");
    if (length != null) {
      long declared;
      try {
        declared = Long.parseLong(length.strip());
      } catch (NumberFormatException e) {
        throw Refusal.badInput("Content-Length: not a number");
      }
      if (declared > limit) {
        throw new Refusal(Kind.TOO_LARGE, "body over the limit of " + limit + " bytes (" + setting + ")");
      }
    }
    if (exchange.abandoned()) { // the client went away mid-body: not the gateway's error (499, outcome=cancelled)
      log.debug("Request {}: the client went away while sending its body", requestId);
      throw Refusal.clientGone();
    }
    byte[] bytes = exchange.body();
    if (bytes.length > limit) {
      throw new Refusal(Kind.TOO_LARGE, "body over the limit of " + limit + " bytes (" + setting + ")");
    }
    return bytes;
  }

  void json(int status, JsonNode body) {
    try {
      bytes(status, "application/json", InferBody.JSON.writeValueAsBytes(body));
    } catch (IOException e) {
      bytes(500, "application/json", "{\"error\":\"internal error\"}".getBytes(StandardCharsets.UTF_8));
    }
  }

  void error(int status, String message) {
    json(status, InferBody.JSON.createObjectNode().put("error", message));
  }

  void bytes(int status, String contentType, byte[] bytes) {
    if (!answered.compareAndSet(false, true)) {
      return;
    }
    try {
      exchange.send(status, contentType, bytes);
    } finally {
      metrics.request(model, endpoint, status, System.nanoTime() - start);
    }
  }

  /** A streamed answer (chunked); {@code writer} writes the body. Failures after the headers end the stream. */
  void stream(int status, String contentType, StreamWriter writer) {
    if (!answered.compareAndSet(false, true)) {
      return;
    }
    try (OutputStream out = exchange.stream(status, contentType)) {
      writer.write(out);
    } catch (IOException e) {
      log.debug("Client went away during a streamed answer: {}", e.getMessage());
    } catch (RuntimeException e) {
      log.error("A streamed answer broke off for request {}", requestId, e);
    } finally {
      metrics.request(model, endpoint, status, System.nanoTime() - start);
    }
  }

  interface StreamWriter {
    void write(OutputStream out) throws IOException;
  }
}
