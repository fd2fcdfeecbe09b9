package io.partita.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Where the time of Kafka round trips went, from the timestamps the records carry: the caller's
 * start and end of each call, the broker's acknowledgement of the request and the reply's arrival
 * (both seen by {@code PartitaClient}), and the worker's {@code partita-stages} header (read,
 * decoded, run-start, run-end, encoded). All are {@code EpochMicros} of one JVM in the bench, so
 * differences are exact up to the clock's resolution. Pure: no Kafka, no clock.
 *
 * <p>Stages of one call, each the difference of two stamps:
 * client produce (start to ack; to the worker's read when the worker read it before the ack came),
 * in Kafka (to the worker's read), decode, batch wait (to the run's start), run, encode (to the
 * reply's encoding), reply produce and fetch (to the client's reply loop), reply read (to the
 * caller's future returning). A call answered without running has no decode-to-run stages.
 */
final class StageTimes {
  static final List<String> STAGES = List.of("client produce", "in Kafka", "decode", "batch wait", "run", "encode",
      "reply produce + fetch", "reply read");

  /** What the caller saw of one call. */
  record Call(long startMicros, long endMicros) {}

  /** What the client's reply loop saw of one call (see {@code PartitaClient.ReplyTiming}). */
  record Reply(long ackedMicros, long receivedMicros, String stagesHeader) {}

  private final Map<String, Call> calls = new ConcurrentHashMap<>();
  private final Map<String, Reply> replies = new ConcurrentHashMap<>();

  void call(String id, long startMicros, long endMicros) {
    calls.put(id, new Call(startMicros, endMicros));
  }

  void reply(String id, long ackedMicros, long receivedMicros, String stagesHeader) {
    replies.put(id, new Reply(ackedMicros, receivedMicros, stagesHeader));
  }

  void clear() {
    calls.clear();
    replies.clear();
  }

  /** The worker's stamps by name, e.g. {@code read=1;decoded=2} to {read=1, decoded=2}; empty for null. */
  static Map<String, Long> parse(String header) {
    Map<String, Long> out = new LinkedHashMap<>();
    if (header == null || header.isBlank()) {
      return out;
    }
    for (String part : header.split(";")) {
      int eq = part.indexOf('=');
      if (eq > 0) {
        try {
          out.put(part.substring(0, eq).strip(), Long.parseLong(part.substring(eq + 1).strip()));
        } catch (NumberFormatException e) {
          // a stamp that is not a number is left out
        }
      }
    }
    return out;
  }

  /**
   * One call's stages in microseconds, in {@link #STAGES} order; null for a stage the stamps do not
   * give (no run, no acknowledgement), and null altogether without the worker's read and encoded stamps.
   */
  static Long[] stages(Call call, Reply reply) {
    Map<String, Long> w = parse(reply.stagesHeader());
    Long read = w.get("read");
    Long decoded = w.get("decoded");
    Long encoded = w.get("encoded");
    if (read == null || decoded == null || encoded == null) {
      return null;
    }
    Long runStart = w.get("run-start");
    Long runEnd = w.get("run-end");
    Long[] out = new Long[STAGES.size()];
    long produced = reply.ackedMicros() > 0 ? Math.min(reply.ackedMicros(), read) : read;
    out[0] = reply.ackedMicros() > 0 ? produced - call.startMicros() : null;
    out[1] = reply.ackedMicros() > 0 ? read - produced : null;
    out[2] = decoded - read;
    if (runStart != null && runEnd != null) {
      out[3] = runStart - decoded;
      out[4] = runEnd - runStart;
      out[5] = encoded - runEnd;
    }
    out[6] = reply.receivedMicros() - encoded;
    out[7] = call.endMicros() - reply.receivedMicros();
    return out;
  }

  /** The summary of the calls recorded so far: the median of each stage, in ms. */
  Summary summary() {
    List<List<Long>> per = new ArrayList<>();
    STAGES.forEach(s -> per.add(new ArrayList<>()));
    List<Long> totals = new ArrayList<>();
    for (Map.Entry<String, Call> e : calls.entrySet()) {
      Reply r = replies.get(e.getKey());
      if (r == null) {
        continue;
      }
      Long[] s = stages(e.getValue(), r);
      if (s == null) {
        continue;
      }
      for (int i = 0; i < s.length; i++) {
        if (s[i] != null) {
          per.get(i).add(s[i]);
        }
      }
      totals.add(e.getValue().endMicros() - e.getValue().startMicros());
    }
    double[] medians = new double[STAGES.size()];
    for (int i = 0; i < medians.length; i++) {
      medians[i] = medianMs(per.get(i));
    }
    return new Summary(totals.size(), medians, medianMs(totals));
  }

  /**
   * @param calls calls with all their stamps
   * @param medianMs each stage's median, in {@link #STAGES} order (NaN where no call had the stage)
   * @param totalMedianMs the median round trip of the same calls
   */
  record Summary(int calls, double[] medianMs, double totalMedianMs) {
    double sumOfMediansMs() {
      double sum = 0;
      for (double m : medianMs) {
        sum += Double.isNaN(m) ? 0 : m;
      }
      return sum;
    }
  }

  static double medianMs(List<Long> micros) {
    if (micros.isEmpty()) {
      return Double.NaN;
    }
    long[] sorted = micros.stream().mapToLong(Long::longValue).toArray();
    Arrays.sort(sorted);
    int n = sorted.length;
    double median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
    return median / 1000.0;
  }
}
