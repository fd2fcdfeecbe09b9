package io.partita.gateway.kafka;

import io.partita.avro.Demand;
import io.partita.common.Topic;
import io.partita.common.Topics;
import io.partita.common.health.LoopGuard;
import io.partita.common.serde.Codecs;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the planner how much traffic each service model gets: every interval it produces one
 * {@link Demand} per service model to {@code <prefix>.demand} (key = service model) with the
 * request rate this gateway saw (infer calls and batch-job items) and the consumer lag of the
 * model's request topic (end offsets minus the workers' committed offsets). The request topic is
 * its base model's, shared by all of that base model's service models, so its lag is reported on
 * one of them (the first by name) and 0 on the others: the planner sums demand per base model.
 *
 * <p>The rate is rounded to two significant figures, so traffic that merely jitters does not make
 * the planner re-plan (and the workers re-partition) every interval. With several gateways each
 * reports only what it saw and the last report wins: the planner then sees one gateway's share.
 *
 * <p>A report that fails is counted and summarised in the log, and the next interval tries again:
 * nothing a report throws may escape {@link #run()}, because a scheduled task that throws is never
 * run again.
 */
public final class DemandReporter implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(DemandReporter.class);

  private final Supplier<Map<String, String>> baseModels;
  private final Topics topics;
  private final Producer<String, byte[]> producer;
  private final Admin admin;
  private final Topic<Demand> demandTopic;
  private final LongSupplier clock;
  private final Map<String, LongAdder> counts = new ConcurrentHashMap<>();
  private long lastReport;
  private final LoopGuard guard;

  /** @param baseModels service model to its base model */
  public DemandReporter(Map<String, String> baseModels, Topics topics, Producer<String, byte[]> producer, Admin admin,
      Codecs codecs, LongSupplier clock, LoopGuard guard) {
    this(fixed(Map.copyOf(baseModels)), topics, producer, admin, codecs, clock, guard);
  }

  private static Supplier<Map<String, String>> fixed(Map<String, String> baseModels) {
    return () -> baseModels;
  }

  /**
   * @param baseModels service model to its base model, as offered now (read on every report and
   *     count: a model added to the catalog is reported from then on, one withdrawn no longer)
   */
  public DemandReporter(Supplier<Map<String, String>> baseModels, Topics topics, Producer<String, byte[]> producer,
      Admin admin, Codecs codecs, LongSupplier clock, LoopGuard guard) {
    this.guard = guard;
    this.baseModels = baseModels;
    this.topics = topics;
    this.producer = producer;
    this.admin = admin;
    this.demandTopic = topics.demand(codecs);
    this.clock = clock;
    this.lastReport = clock.getAsLong();
    guard.ready(); // it runs on a timer: alive from the start, and nothing it meets can end it
  }

  /** Counts one request (an infer call or a job item) for a service model; unknown names are ignored. */
  public void record(String serviceModel) {
    if (serviceModel != null && baseModels.get().containsKey(serviceModel)) {
      counts.computeIfAbsent(serviceModel, m -> new LongAdder()).increment();
    }
  }

  /** One report: rates since the last one, and lag. Failures are logged; the next interval tries again. */
  @Override
  public void run() {
    try {
      report();
    } catch (Throwable e) {
      guard.retrying("reporting demand", e);
    }
    guard.flush();
  }

  private void report() {
    long now = clock.getAsLong();
    double seconds = Math.max(1e-3, (now - lastReport) / 1000.0);
    lastReport = now;
    Map<String, String> offered = new TreeMap<>(baseModels.get());
    counts.keySet().retainAll(offered.keySet());
    Map<String, Long> lag = lag(offered);
    for (String model : offered.keySet()) {
      LongAdder count = counts.get(model);
      double rate = rounded(count == null ? 0 : count.sumThenReset() / seconds);
      Demand demand = new Demand(model, rate, lag.getOrDefault(model, 0L), now);
      producer.send(demandTopic.record(model, demand), (md, e) -> {
        if (e != null) {
          guard.retrying("writing the demand report of " + model, e);
        }
      });
    }
  }

  private Map<String, Long> lag(Map<String, String> baseModels) {
    Map<String, Long> lag = new HashMap<>();
    try {
      Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(topics.workersGroup())
          .partitionsToOffsetAndMetadata().get(5, TimeUnit.SECONDS);
      Map<String, String> topicToModel = new HashMap<>();
      baseModels.forEach((m, base) -> topicToModel.putIfAbsent(topics.requests(base), m)); // sorted: the first name wins
      Map<TopicPartition, OffsetSpec> ask = new HashMap<>();
      for (var description : admin.describeTopics(List.copyOf(topicToModel.keySet())).allTopicNames().get(5, TimeUnit.SECONDS).values()) {
        description.partitions().forEach(p -> ask.put(new TopicPartition(description.name(), p.partition()), OffsetSpec.latest()));
      }
      Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> ends = admin.listOffsets(ask).all().get(5, TimeUnit.SECONDS);
      ends.forEach((tp, end) -> {
        OffsetAndMetadata done = committed.get(tp);
        long behind = end.offset() - (done == null ? 0 : done.offset());
        lag.merge(topicToModel.get(tp.topic()), Math.max(0, behind), Long::sum);
      });
    } catch (Exception e) {
      log.debug("Consumer lag unknown this interval: {}", e.toString());
    }
    return lag;
  }

  /** A rate rounded to two significant figures (0 stays 0). */
  static double rounded(double rate) {
    if (rate <= 0 || Double.isNaN(rate) || Double.isInfinite(rate)) {
      return 0;
    }
    double scale = Math.pow(10, Math.floor(Math.log10(rate)) - 1);
    return Math.round(rate / scale) * scale;
  }
}
