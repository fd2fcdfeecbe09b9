package io.partita.bench;

import io.partita.gateway.infer.ServerTiming;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Where the time of gateway round trips went, from the gateway's own {@code Server-Timing} answers
 * ({@link ServerTiming}: queue, decode, produce, kafka, encode) and the round trip the load
 * generator measured around each call. What the gateway's stages do not cover (the client's encode
 * and send, the loopback, the answer's hand-over to the event loop and its write, the client's
 * receive) is the round trip less their sum: "outside the gateway". Medians are taken per stage
 * over the calls of one measured window, so they need not add up to the median round trip. Pure:
 * no clock, no I/O.
 */
final class GatewayStages {
  static final List<String> STAGES = ServerTiming.STAGES;

  /** One call: each stage's ms (NaN where the answer did not carry it) and the client's round trip. */
  private record Sample(double[] stagesMs, double roundTripMs) {}

  private final ConcurrentLinkedQueue<Sample> samples = new ConcurrentLinkedQueue<>();
  private volatile boolean recording;

  /** Only calls that end between {@link #start} and {@link #stop} are kept. */
  void start() {
    samples.clear();
    recording = true;
  }

  void stop() {
    recording = false;
  }

  /** One answered call: its {@code Server-Timing} value (null when it had none) and the round trip seen by the caller. */
  void call(String serverTiming, long roundTripNanos) {
    if (!recording || serverTiming == null) {
      return;
    }
    Map<String, Double> parsed = ServerTiming.parse(serverTiming);
    double[] ms = new double[STAGES.size()];
    for (int i = 0; i < ms.length; i++) {
      ms[i] = parsed.getOrDefault(STAGES.get(i), Double.NaN);
    }
    samples.add(new Sample(ms, roundTripNanos / 1e6));
  }

  /**
   * @param medianMs median of each stage, {@link #STAGES} order (NaN: no call had it)
   * @param outsideMs median over calls of round trip less the call's stages
   * @param roundTripMs median round trip of the calls that carried a header
   */
  record Summary(int calls, double[] medianMs, double outsideMs, double roundTripMs) {
    double sumOfMediansMs() {
      return Arrays.stream(medianMs).filter(d -> !Double.isNaN(d)).sum();
    }
  }

  Summary summary() {
    List<Sample> all = new ArrayList<>(samples);
    double[] medians = new double[STAGES.size()];
    for (int i = 0; i < medians.length; i++) {
      int stage = i;
      medians[i] = median(all.stream().mapToDouble(s -> s.stagesMs()[stage]).filter(d -> !Double.isNaN(d)).toArray());
    }
    double outside = median(all.stream().mapToDouble(s -> s.roundTripMs()
        - Arrays.stream(s.stagesMs()).filter(d -> !Double.isNaN(d)).sum()).toArray());
    double roundTrip = median(all.stream().mapToDouble(Sample::roundTripMs).toArray());
    return new Summary(all.size(), medians, outside, roundTrip);
  }

  static double median(double[] values) {
    if (values.length == 0) {
      return Double.NaN;
    }
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    int mid = sorted.length / 2;
    return sorted.length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  }
}
