package io.partita.gateway.infer;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Where one infer call's time went inside the gateway, told to the caller in a standard
 * {@code Server-Timing} header (HTTP) or {@code server-timing} trailer (gRPC), e.g.
 * {@code queue;dur=0.041, decode;dur=0.120, produce;dur=0.035, kafka;dur=4.802, encode;dur=0.090}
 * (milliseconds, three decimals). Six {@link System#nanoTime} stamps, taken by whichever thread
 * reaches each point; the stages between them, in order:
 * <ol>
 *   <li>{@code queue}: the request received (HTTP: its last byte, on the event loop; gRPC: its
 *       headers, on the handler executor) to its handler running on the handler executor;</li>
 *   <li>{@code decode}: the handler's checks, in the order they run: API key, model lookup, body
 *       decode and validation, routing and the in-flight slot, up to producing;</li>
 *   <li>{@code produce}: the request encoded as a record and handed to the Kafka producer
 *       ({@code send} returning, not the broker's acknowledgement); a call the {@link Coalescer}
 *       held for company counts that wait here;</li>
 *   <li>{@code kafka}: from there to the reply in the gateway's hands: the broker, the worker, the
 *       reply fetched by the gateway's reply loop and handed to an answer thread;</li>
 *   <li>{@code encode}: the reply turned into the answer (HTTP: the JSON or binary body; gRPC: the
 *       response message built and serialized).</li>
 * </ol>
 * A stage whose two ends were not both reached (a refusal before producing) is left out, so an
 * error answer carries the stages that ran. What follows the last stamp (handing the answer to the
 * event loop, writing it) and everything on the client's side is not in the header: the client's
 * round trip less the header's sum is the time outside these stages.
 *
 * <p>Stamps are written at most once each and read once, by the thread that builds the header after
 * the last; they are volatile because the stamps either side of producing are taken on different
 * threads with no other order between them. One object per call, one short string per answer.
 */
public final class ServerTiming {
  /** The HTTP response header. */
  public static final String HTTP_HEADER = "Server-Timing";
  /** The gRPC trailing metadata key (lower case, as gRPC metadata keys are). */
  public static final String GRPC_KEY = "server-timing";
  /** The stage names, in order. */
  public static final List<String> STAGES = List.of("queue", "decode", "produce", "kafka", "encode");

  private final long received;
  private volatile long handling;
  private volatile long producing;
  private volatile long produced;
  private volatile long replied;
  private volatile long encoded;

  /** @param receivedNanos when the request was received ({@link System#nanoTime}) */
  public ServerTiming(long receivedNanos) {
    this.received = receivedNanos;
  }

  /** The handler starts with this call (now, or {@code nanos} when it started earlier). */
  public ServerTiming handling(long nanos) {
    handling = nanos;
    return this;
  }

  /** About to hand the request to the producer. */
  public void producing() {
    producing = System.nanoTime();
  }

  /** The producer's {@code send} returned. */
  public void produced() {
    produced = System.nanoTime();
  }

  /** The reply (or its failure) reached the gateway's answer thread. */
  public void replied() {
    replied = System.nanoTime();
  }

  /** The answer is encoded. */
  public void encoded() {
    encoded = System.nanoTime();
  }

  /** The header's value for the stages reached so far; empty when none was. */
  public String header() {
    return format(received, handling, producing, produced, replied, encoded);
  }

  /**
   * The header's value for six stamps in stage order (0: not reached). A {@code produced} stamp
   * missing, or later than {@code replied} (the reply beat {@code send}'s return), folds produce
   * into kafka, which then starts at {@code producing}.
   */
  static String format(long received, long handling, long producing, long produced, long replied, long encoded) {
    boolean folded = produced == 0 || replied != 0 && produced - replied > 0;
    StringBuilder out = new StringBuilder(96);
    stage(out, STAGES.get(0), received, handling);
    stage(out, STAGES.get(1), handling, producing);
    if (!folded) {
      stage(out, STAGES.get(2), producing, produced);
    }
    stage(out, STAGES.get(3), folded ? producing : produced, replied);
    stage(out, STAGES.get(4), replied, encoded);
    return out.toString();
  }

  private static void stage(StringBuilder out, String name, long from, long to) {
    if (from != 0 && to != 0) {
      append(out, name, to - from);
    }
  }

  /**
   * A {@code Server-Timing} value read back (by a client, a test, the benchmark): each metric's
   * name to its {@code dur} in milliseconds, in the order given; a metric without a readable
   * {@code dur} is left out. Null or empty: none.
   */
  public static Map<String, Double> parse(String value) {
    Map<String, Double> out = new LinkedHashMap<>();
    if (value == null) {
      return out;
    }
    for (String metric : value.split(",")) {
      String[] parts = metric.strip().split(";");
      for (int i = 1; i < parts.length; i++) {
        String param = parts[i].strip();
        if (param.startsWith("dur=")) {
          try {
            out.put(parts[0].strip(), Double.parseDouble(param.substring(4)));
          } catch (NumberFormatException e) {
            // not a duration: left out, as the header's syntax says
          }
        }
      }
    }
    return out;
  }

  /** Appends {@code name;dur=MS} with three decimals (never negative), comma-separated. */
  static void append(StringBuilder out, String name, long nanos) {
    if (out.length() > 0) {
      out.append(", ");
    }
    long micros = Math.max(0, nanos) / 1000;
    out.append(name).append(";dur=").append(micros / 1000).append('.');
    long frac = micros % 1000;
    if (frac < 100) {
      out.append('0');
    }
    if (frac < 10) {
      out.append('0');
    }
    out.append(frac);
  }
}
