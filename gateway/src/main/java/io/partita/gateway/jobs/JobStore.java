package io.partita.gateway.jobs;

import io.partita.avro.BatchJob;
import io.partita.avro.JobItem;
import io.partita.avro.JobItemResult;
import io.partita.avro.JobItemResults;
import io.partita.avro.JobStatus;
import io.partita.common.Topic;
import io.partita.common.Topics;
import io.partita.common.health.LoopGuard;
import io.partita.common.kafka.TopicFollower;
import io.partita.common.serde.Codecs;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Batch job state as every gateway sees it, kept in Kafka: the input chunks on {@code <p>.jobs},
 * the current {@link JobStatus} of each job on the compacted {@code <p>.jobs.status}, and the items'
 * results on {@code <p>.jobs.items}, one {@link JobItemResults} record per request answered (the
 * rows of a pack together; a lone {@link JobItemResult}, as runners wrote before, is read too). A
 * background thread follows the status topic from its beginning, so any gateway answers for any
 * job; the gateway that runs a job also records its own reports here at once.
 *
 * <p>Submission writes the chunks, waits until the broker has them, then writes the QUEUED status:
 * a job exists once its status does, so a gateway that dies while writing chunks leaves nothing a
 * runner would pick up.
 *
 * <p>No one status record stops the follower: one that cannot be decoded, or that no runner could
 * run ({@link JobStates#problem}), is counted, summarised in the log and passed over. Its state is
 * in its {@link LoopGuard}, which readiness reads.
 */
public final class JobStore implements Runnable, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(JobStore.class);

  private final Topics topics;
  private final Producer<String, byte[]> producer;
  private final Admin admin;
  private final Supplier<Consumer<String, byte[]>> consumers;
  private final TopicFollower follower;
  private final LongSupplier clock;
  private final Topic<BatchJob> jobs;
  private final Topic<JobStatus> statusTopic;
  private final Topic<JobItemResults> results;
  private final Topic<JobItemResult> resultsOneByOne;
  private final Map<String, JobStatus> statuses = new ConcurrentHashMap<>();
  private final Object changed = new Object();
  private volatile boolean running = true;

  /**
   * @param consumers makes a consumer with no group (assigned partitions only), for reading a job's
   *     chunks and results; the caller closes it
   * @param guard the status follower's loop
   */
  public JobStore(Topics topics, Producer<String, byte[]> producer, Admin admin, Supplier<Consumer<String, byte[]>> consumers,
      Codecs codecs, LongSupplier clock, LoopGuard guard) {
    this.topics = topics;
    this.producer = producer;
    this.admin = admin;
    this.consumers = consumers;
    this.clock = clock;
    this.jobs = topics.jobs(codecs);
    this.statusTopic = topics.jobStatus(codecs);
    this.results = topics.jobItems(codecs);
    this.resultsOneByOne = topics.jobItemsOneByOne(codecs);
    this.follower = new TopicFollower(consumers.get(), TopicFollower.Settings.fromBeginning("a job status", topics.jobStatus()),
        guard, this::apply);
  }

  /** Completes once every status written before start has been read. */
  public CompletableFuture<Void> caughtUp() {
    return follower.caughtUp();
  }

  @Override
  public void run() {
    follower.run();
  }

  /** Applies one status record; throws when it cannot be decoded or run (the follower passes it over). */
  private void apply(ConsumerRecord<String, byte[]> record) {
    if (record.value() == null) {
      return;
    }
    JobStatus status = statusTopic.decode(record.value());
    String problem = JobStates.problem(status);
    if (problem != null) {
      throw new IllegalArgumentException("job status that cannot be run: " + problem);
    }
    remember(status);
  }

  private void remember(JobStatus status) {
    statuses.merge(status.getJobId(), status, JobStates::merge);
    synchronized (changed) {
      changed.notifyAll();
    }
  }

  /** Waits up to {@code ms} for any status to change. */
  public void awaitChange(long ms) throws InterruptedException {
    synchronized (changed) {
      changed.wait(ms);
    }
  }

  public Optional<JobStatus> status(String jobId) {
    return Optional.ofNullable(statuses.get(jobId));
  }

  /** Every known job, newest first. */
  public List<JobStatus> all() {
    List<JobStatus> all = new ArrayList<>(statuses.values());
    all.sort(Comparator.comparingLong(JobStatus::getCreatedAt).reversed().thenComparing(JobStatus::getJobId));
    return all;
  }

  /** The oldest job that is not final (queued, running or cancelling), or null. */
  public JobStatus nextToRun() {
    return statuses.values().stream().filter(s -> !JobStates.isFinal(s.getState()))
        .min(Comparator.comparingLong(JobStatus::getCreatedAt).thenComparing(JobStatus::getJobId)).orElse(null);
  }

  /** Writes a status and waits until the broker has it; this gateway sees it at once. */
  public JobStatus publish(JobStatus status) {
    await(send(status));
    remember(status);
    return status;
  }

  /** Writes a status without waiting (progress reports); this gateway sees it at once. */
  public void publishLater(JobStatus status) {
    send(status);
    remember(status);
  }

  private Future<RecordMetadata> send(JobStatus status) {
    return producer.send(statusTopic.record(status.getJobId(), status));
  }

  /**
   * What a new job is: its service model, pinned version (or null), items, and owner (the digest of
   * the submitting API key, {@code ApiKeys.owner}; null when keys are off).
   */
  public record NewJob(String serviceModel, String version, List<JobItem> items, String owner) {
    public NewJob(String serviceModel, String version, List<JobItem> items) {
      this(serviceModel, version, items, null);
    }
  }

  /** Writes a job's chunks, then its QUEUED status; returns the status once both are on the broker. */
  public JobStatus submit(NewJob job) {
    String jobId = "job-" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
    long resultsOffset = endOffset(topics.jobItems());
    List<List<JobItem>> chunks = JobLines.chunks(job.items());
    List<Future<RecordMetadata>> sent = new ArrayList<>();
    int first = 0;
    for (int c = 0; c < chunks.size(); c++) {
      BatchJob chunk = BatchJob.newBuilder().setJobId(jobId).setServiceModel(job.serviceModel()).setVersion(job.version())
          .setChunk(c).setFirstIndex(first).setItems(chunks.get(c)).build();
      sent.add(producer.send(jobs.record(0, jobId, chunk)));
      first += chunks.get(c).size();
    }
    long inputOffset = await(sent.get(0)).offset();
    sent.forEach(JobStore::await);
    long now = clock.getAsLong();
    return publish(JobStatus.newBuilder()
        .setJobId(jobId).setServiceModel(job.serviceModel()).setVersion(job.version()).setState(JobStates.QUEUED)
        .setTotal(job.items().size()).setDone(0).setFailed(0).setChunks(chunks.size())
        .setInputOffset(inputOffset).setResultsOffset(resultsOffset)
        .setCreatedAt(now).setStartedAt(0).setUpdatedAt(now).setRatePerSecond(0).setRunner(null).setMessage(null)
        .setOwner(job.owner())
        .build());
  }

  /** Asks to cancel a job (CANCELLING); the runner stops sending its items and makes it CANCELLED with the final counts. */
  public JobStatus cancel(JobStatus status) {
    return publish(JobStatus.newBuilder(status).setState(JobStates.CANCELLING).setRatePerSecond(0)
        .setUpdatedAt(Math.max(clock.getAsLong(), status.getUpdatedAt())).setMessage("cancelled by a client").build());
  }

  /**
   * Reads the results of {@code jobId} from {@code fromOffset} up to the end as it is now, decoded,
   * handing each to {@code handler} until it returns false. An undecodable record is logged with its
   * offset and skipped. Keeps Kafka records out of the HTTP package, which must not know Kafka.
   */
  public void readResults(String jobId, long fromOffset, Predicate<JobItemResult> handler) {
    read(resultsTopic(), jobId, fromOffset, record -> {
      List<JobItemResult> results;
      try {
        results = decodeResults(record);
      } catch (RuntimeException e) { // DecodeException, or a result no reader should trust: passed over
        log.warn("Job {}: skipping an unreadable result at offset {}: {}", jobId, record.offset(), e.getClass().getSimpleName());
        return true;
      }
      for (JobItemResult result : results) {
        if (!handler.test(result)) {
          return false;
        }
      }
      return true;
    });
  }

  /**
   * Reads the records of {@code jobId} on partition 0 of {@code topic} from {@code fromOffset} up to
   * the end as it is now, handing each to {@code handler} until it returns false.
   */
  public void read(String topic, String jobId, long fromOffset, Predicate<ConsumerRecord<String, byte[]>> handler) {
    try (Consumer<String, byte[]> consumer = consumers.get()) {
      TopicPartition tp = new TopicPartition(topic, 0);
      consumer.assign(List.of(tp));
      consumer.seek(tp, fromOffset);
      long end = consumer.endOffsets(List.of(tp)).get(tp);
      while (running && consumer.position(tp) < end) {
        for (ConsumerRecord<String, byte[]> record : consumer.poll(Duration.ofMillis(200))) {
          if (record.offset() >= end) {
            return;
          }
          if (jobId.equals(record.key()) && record.value() != null && !handler.test(record)) {
            return;
          }
        }
      }
    }
  }

  public BatchJob decodeChunk(ConsumerRecord<String, byte[]> record) {
    return jobs.decode(record.value());
  }

  /**
   * The results one record holds: a {@link JobItemResults}, or a lone {@link JobItemResult} as
   * runners wrote before; a record that is neither throws the first decoder's error.
   */
  public List<JobItemResult> decodeResults(ConsumerRecord<String, byte[]> record) {
    try {
      return results.decode(record.value()).getResults();
    } catch (RuntimeException e) {
      try {
        return List.of(resultsOneByOne.decode(record.value()));
      } catch (RuntimeException older) {
        e.addSuppressed(older);
        throw e;
      }
    }
  }

  /** The topic of per-item results. */
  public String resultsTopic() {
    return results.name();
  }

  /** The topic of job results, bound to its codec (the job leader writes them). */
  public Topic<JobItemResults> results() {
    return results;
  }

  private long endOffset(String topic) {
    try {
      return admin.listOffsets(Map.of(new TopicPartition(topic, 0), OffsetSpec.latest())).all()
          .get(30, TimeUnit.SECONDS).get(new TopicPartition(topic, 0)).offset();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while reading the end of " + topic, e);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("cannot read the end offset of " + topic + ": " + e.getMessage(), e);
    }
  }

  private static RecordMetadata await(Future<RecordMetadata> future) {
    try {
      return future.get(60, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while writing a job record", e);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("a job record could not be written to Kafka: " + e.getMessage(), e);
    }
  }

  @Override
  public void close() {
    running = false;
    follower.close();
  }
}
