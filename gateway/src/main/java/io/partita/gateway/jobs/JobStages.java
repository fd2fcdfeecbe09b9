package io.partita.gateway.jobs;

import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Where one batch job's time goes in the gateway, summed over the job: the runner thread's own work
 * (reading chunks, packing rows, sending requests), its waits for a job slot (every slot is taken by
 * a request still out: the pipeline behind the gateway is the slower part), the answer threads'
 * work on replies (cutting packs back into rows, writing results), and each request's round trip
 * (sent to answered: Kafka, the worker's queue and run, the reply). Safe to add to from any thread.
 */
public final class JobStages {
  /** The stages, with the names the log and the metrics use. */
  public enum Stage {
    /** Decoding the job's chunks from the jobs topic (runner thread). */
    READ("read"),
    /** Grouping rows into packs and stacking their inputs (runner thread). */
    PACK("pack"),
    /** Encoding a request and handing it to the producer (runner thread, or an answer thread for a retry). */
    SEND("send"),
    /** Waiting for a job slot of the gateway's in-flight capacity (runner thread). */
    SLOT_WAIT("slot_wait"),
    /** Cutting replies back per row and writing one result per row (answer threads). */
    RESULTS("results");

    private final String label;

    Stage(String label) {
      this.label = label;
    }

    public String label() {
      return label;
    }
  }

  private final Map<Stage, LongAdder> nanos = new EnumMap<>(Stage.class);
  private final LongAdder requests = new LongAdder();
  private final LongAdder requestNanos = new LongAdder();

  public JobStages() {
    for (Stage s : Stage.values()) {
      nanos.put(s, new LongAdder());
    }
  }

  public void add(Stage stage, long elapsedNanos) {
    nanos.get(stage).add(elapsedNanos);
  }

  /** One request's round trip, sent to answered. */
  public void request(long elapsedNanos) {
    requests.increment();
    requestNanos.add(elapsedNanos);
  }

  public long nanos(Stage stage) {
    return nanos.get(stage).sum();
  }

  public long requests() {
    return requests.sum();
  }

  /** Round trips summed (they overlap: many requests are out at once). */
  public long requestNanos() {
    return requestNanos.sum();
  }

  /** Seconds by stage label, in stage order. */
  public Map<String, Double> secondsByStage() {
    Map<String, Double> out = new LinkedHashMap<>();
    for (Stage s : Stage.values()) {
      out.put(s.label(), nanos(s) / 1e9);
    }
    return out;
  }

  /** "read 0.12 s, pack 0.40 s, ..., 1574 requests, mean round trip 250.1 ms". */
  @Override
  public String toString() {
    StringBuilder b = new StringBuilder();
    for (Stage s : Stage.values()) {
      b.append(s.label()).append(' ').append(String.format(Locale.ROOT, "%.2f", nanos(s) / 1e9)).append(" s, ");
    }
    long n = requests();
    b.append(n).append(" requests, mean round trip ")
        .append(n == 0 ? "-" : String.format(Locale.ROOT, "%.1f", requestNanos() / 1e6 / n)).append(" ms");
    return b.toString();
  }
}
