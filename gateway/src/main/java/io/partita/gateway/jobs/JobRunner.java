package io.partita.gateway.jobs;

import io.partita.avro.BatchJob;
import io.partita.avro.ErrorCode;
import io.partita.avro.InferenceError;
import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.avro.JobItem;
import io.partita.avro.JobItemResult;
import io.partita.avro.JobItemResults;
import io.partita.avro.JobStatus;
import io.partita.avro.Tensor;
import io.partita.common.Topics;
import io.partita.common.health.LoopGuard;
import io.partita.common.packing.PackRule;
import io.partita.gateway.kafka.RequestProducer;
import io.partita.gateway.limits.Capacity;
import io.partita.gateway.metrics.GatewayMetrics;
import io.partita.gateway.refusal.Refusal.Kind;
import io.partita.gateway.refusal.SafeText;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs batch jobs, one at a time, oldest first, on the one gateway that holds partition 0 of
 * {@code <p>.jobs} in the consumer group {@code <p>.gateway.jobs} (so with several gateways exactly
 * one runs jobs, and another takes over when it leaves or dies).
 *
 * <p>Running a job: read the results it already has (from its {@code resultsOffset} on
 * {@code <p>.jobs.items}), then read its chunks and send the items that have no result yet, packed
 * by a {@link RowPacker} under the model's {@link PackRule} (several rows stacked along the batch
 * dimension in one request where the model allows it, else one request per item), each request
 * taking a job slot of the {@link Capacity} (so jobs never hold more than their share of the
 * in-flight limit and yield to online calls). A reply is cut back per row ({@link Pack#split}) and
 * each row gets one {@link JobItemResult}, the request's rows written together as one
 * {@link JobItemResults} record; a packed request answered with a non-transient error,
 * or whose outputs cannot be cut back, sends its rows again one by one. A deadline, a produce
 * failure or a transient error reply (OVERLOADED, NOT_READY, DEADLINE_EXCEEDED) is retried up to
 * {@code retries} times with the same request id, after a pause ({@link #retryPauseMs}). When every item has a result and the broker has
 * them all, the job is DONE. Progress is kept per row, not per request: a record of results may
 * hold any rows (a pack's rows less those already written), and a runner that dies before its
 * record is written leaves those rows to the next leader, which packs them afresh.
 *
 * <p>Exactly one result per item: results are only written while this gateway leads; on losing the
 * lead (or closing) it stops writing, flushes what it wrote, and only then leaves the group, so the
 * next leader reads every result written before it starts and sends only the items without one.
 * Readers keep the first result per index as well ({@link ResultOrder}).
 *
 * <p>No one record stops a job or the runner: a chunk or result that cannot be decoded, or a chunk
 * that does not fit its job (another model, indexes outside the job), is counted, summarised in the
 * log and passed over. The election loop's state is in its {@link LoopGuard}, which readiness reads.
 */
public final class JobRunner implements Runnable, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(JobRunner.class);
  private static final long PROGRESS_EVERY_MS = 1000;
  /** The pause before the first retry of an item; it doubles with each retry, up to {@link #MAX_RETRY_PAUSE_MS}. */
  static final long RETRY_PAUSE_MS = 250;
  static final long MAX_RETRY_PAUSE_MS = 2000;
  private static final ScheduledExecutorService RETRY_PAUSES = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "partita-job-retries");
    t.setDaemon(true);
    return t;
  });

  /**
   * How long to wait before sending an item again after its {@code attempt}-th try failed for a
   * transient reason: 250 ms, 500 ms, 1 s, then 2 s. An immediate retry would meet the same
   * moment: a slot still opening, a re-share of the request partitions not yet in the routes.
   */
  static long retryPauseMs(int attempt) {
    return Math.min(MAX_RETRY_PAUSE_MS, RETRY_PAUSE_MS << Math.min(10, Math.max(0, attempt - 1)));
  }

  /**
   * What the runner needs from the gateway.
   *
   * @param items how each item is sent
   */
  public record Context(Topics topics, String gatewayId, JobStore store, RequestProducer requests,
      Producer<String, byte[]> producer, Capacity capacity, GatewayMetrics metrics, LongSupplier clock, Items items) {}

  /**
   * How the items of a job are sent.
   *
   * @param timeoutMs how long one item waits for its reply ({@code gateway.jobs.item.timeout.ms})
   * @param retries how often an item is sent again after a transient failure ({@code gateway.jobs.retries})
   * @param packing how the rows of a service model may be packed into one request
   */
  public record Items(long timeoutMs, int retries, Function<String, PackRule> packing) {}

  private final Context ctx;
  private final Consumer<String, byte[]> leader;
  private final Object lock = new Object();
  private volatile boolean open = true;
  private volatile boolean leading;
  private Thread worker;
  private final AtomicReference<Throwable> writeFailure = new AtomicReference<>();
  private final LoopGuard guard;

  /**
   * @param leader a consumer in the group {@code <p>.gateway.jobs}, used only to decide who leads
   * @param guard the election loop's (and the runner's) failures and state
   */
  public JobRunner(Context ctx, Consumer<String, byte[]> leader, LoopGuard guard) {
    this.ctx = ctx;
    this.leader = leader;
    this.guard = guard;
  }

  private volatile Run current;

  /**
   * The live status of the job this gateway is running right now (counts as of this moment, not as
   * of the last report written), or empty when it runs no such job.
   */
  public Optional<JobStatus> live(String jobId) {
    Run run = current;
    if (run == null || !leading || !run.jobId.equals(jobId)) {
      return Optional.empty();
    }
    return Optional.of(run.status(run.cancelled() ? JobStates.CANCELLING : JobStates.RUNNING, null, ctx.clock().getAsLong()));
  }

  /** Whether this gateway currently runs jobs. */
  public boolean leading() {
    return leading;
  }

  @Override
  public void run() {
    try {
      leader.subscribe(List.of(ctx.topics().jobs()), new ConsumerRebalanceListener() {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
          if (!partitions.isEmpty()) {
            stopLeading();
          }
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
          stopLeading();
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
          leader.pause(leader.assignment()); // the group only elects; chunks are read elsewhere
          if (!leader.assignment().isEmpty()) {
            startLeading();
          }
        }
      });
      guard.ready(); // taking part in the election: leading or not, this gateway serves
      while (open) {
        try {
          leader.poll(Duration.ofMillis(200));
        } catch (WakeupException e) {
          throw e;
        } catch (KafkaException e) {
          if (!open) {
            break;
          }
          guard.faulted("taking part in the job leader election", e);
          if (!guard.backOff()) {
            open = false;
          }
          continue;
        }
        guard.ready();
        guard.flush();
      }
    } catch (WakeupException e) {
      // closing
    } catch (Throwable e) {
      if (open) {
        died = true;
        guard.died(e);
      }
    } finally {
      stopLeading(); // results flushed before the group hears that we leave
      if (!died) {
        guard.stopped();
      }
      leader.close(Duration.ofSeconds(5));
    }
  }

  private boolean died;

  private void startLeading() {
    synchronized (lock) {
      if (leading || !open) {
        return;
      }
      leading = true;
      worker = new Thread(this::runJobs, "partita-jobs-runner");
      worker.setDaemon(true);
      worker.start();
      log.info("Gateway {} runs the batch jobs", ctx.gatewayId());
    }
  }

  private void stopLeading() {
    Thread t;
    synchronized (lock) {
      if (!leading) {
        return;
      }
      leading = false; // from here on no result is written by this gateway
      t = worker;
      worker = null;
    }
    t.interrupt();
    try {
      t.join(30_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    ctx.producer().flush();
    log.info("Gateway {} stopped running batch jobs", ctx.gatewayId());
  }

  private void runJobs() {
    try {
      ctx.store().caughtUp().get();
    } catch (InterruptedException e) {
      return;
    } catch (Exception e) {
      log.error("The job status view never caught up; this gateway runs no jobs", e);
      return;
    }
    while (leading) {
      try {
        JobStatus next = ctx.store().nextToRun();
        if (next == null) {
          ctx.store().awaitChange(500);
          continue;
        }
        Run run = new Run(next);
        current = run;
        try {
          run.execute();
        } finally {
          current = null;
        }
      } catch (InterruptedException e) {
        return; // lost the lead or closing
      } catch (Throwable e) {
        if (!leading || Thread.currentThread().isInterrupted()) {
          return;
        }
        // An infrastructure failure (broker unreachable, a result not written): the job keeps its
        // results so far and is taken up again from them after a pause.
        guard.retrying("running batch jobs (again in 5 s)", e);
        try {
          Thread.sleep(5000);
        } catch (InterruptedException stop) {
          return;
        }
      }
    }
  }

  /**
   * One job being run. Counters are guarded by {@link #lock}.
   *
   * <p>Every row runs on one version: the job's pinned one, or else the version that answers its
   * first row. Until that reply, one row at a time is sent alone without a version (a row answered
   * with an error leaves the choice open, the next row asks again); from then on rows are packed and
   * sent pinned, so a plan that moves the service model to another version mid-job does not mix
   * versions in its results. A job taken up again by another gateway pins the version its written
   * results name.
   */
  private final class Run {
    private final JobStatus initial;
    private String version; // guarded by lock; null until chosen
    private final String jobId;
    private final int total;
    private final BitSet done;
    private int doneCount;
    private int failed;
    private int inFlight;
    private long lastProgress;
    private final RateWindow rate = new RateWindow(10_000);
    /** How rows are packed; tightened once a reply shows how many output bytes a row gives. */
    private volatile PackRule rule;
    /** Rows of packs that failed, to be sent again one by one (filled by reply callbacks, sent by the run's thread). */
    private final ConcurrentLinkedQueue<Pack.Member> alone = new ConcurrentLinkedQueue<>();
    private int packsSent;
    private int packsSplit;
    private final long startedAt;
    /** Where the job's time goes (nanoseconds), for the log line at its end and the gateway's metrics. */
    private final JobStages stages = new JobStages();

    Run(JobStatus status) {
      this.initial = status;
      this.startedAt = status.getStartedAt() > 0 ? status.getStartedAt() : ctx.clock().getAsLong();
      this.jobId = status.getJobId();
      this.total = status.getTotal();
      this.done = new BitSet(total);
      this.rule = ctx.items().packing().apply(status.getServiceModel());
      this.version = status.getVersion();
    }

    private String version() {
      synchronized (lock) {
        return version;
      }
    }

    void execute() throws InterruptedException {
      readExistingResults();
      long now = ctx.clock().getAsLong();
      if (!cancelled()) {
        ctx.store().publish(status(JobStates.RUNNING, null, now));
      }
      rate.add(now, doneCount);
      lastProgress = now;
      int[] chunksSeen = {0};
      boolean[] stop = {false};
      ctx.store().read(ctx.topics().jobs(), jobId, initial.getInputOffset(), record -> {
        BatchJob chunk;
        long readStart = System.nanoTime();
        try {
          chunk = ctx.store().decodeChunk(record);
          String problem = misfit(chunk);
          if (problem != null) {
            throw new IllegalArgumentException("a chunk that does not fit job " + jobId + ": " + problem);
          }
        } catch (Throwable e) {
          guard.skipped("a chunk of job " + jobId, record.topic(), record.partition(), record.offset(), e);
          return true;
        } finally {
          stages.add(JobStages.Stage.READ, System.nanoTime() - readStart);
        }
        if (chunk.getChunk() != chunksSeen[0]) {
          return true; // a copy of a chunk already read
        }
        chunksSeen[0]++;
        try {
          stop[0] = !dispatch(chunk);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          stop[0] = true;
        }
        return !stop[0] && chunksSeen[0] < initial.getChunks();
      });
      if (Thread.currentThread().isInterrupted()) {
        throw new InterruptedException();
      }
      drain();
      ctx.producer().flush();
      if (!leading) {
        throw new InterruptedException();
      }
      Throwable failure = writeFailure.getAndSet(null);
      if (failure != null) {
        throw new IllegalStateException("job results could not be written", failure);
      }
      long end = ctx.clock().getAsLong();
      if (cancelled()) {
        ctx.store().publish(status(JobStates.CANCELLED, "cancelled by a client; " + (total - doneCount) + " items not run", end));
      } else if (chunksSeen[0] < initial.getChunks()) {
        ctx.store().publish(status(JobStates.FAILED, "the job's input is no longer on the jobs topic (retention passed?); "
            + chunksSeen[0] + " of " + initial.getChunks() + " chunks found", end));
      } else {
        ctx.store().publish(status(JobStates.DONE, null, end));
      }
      log.info("Job {} ended: {} of {} items done, {} failed; {} requests of up to {} rows, {} packs sent again row by row; {}",
          jobId, doneCount, total, failed, packsSent, rule.maxRows(), packsSplit, stages);
      ctx.metrics().jobStages(initial.getServiceModel(), stages.secondsByStage(), stages.requests(), stages.requestNanos() / 1e9);
    }

    /** Why a chunk cannot belong to this job, or null when it can. */
    private String misfit(BatchJob chunk) {
      if (!chunk.getServiceModel().equals(initial.getServiceModel())) {
        return "its model is not the job's";
      }
      long last = (long) chunk.getFirstIndex() + chunk.getItems().size();
      if (chunk.getChunk() < 0 || chunk.getFirstIndex() < 0 || last > total) {
        return "chunk " + chunk.getChunk() + " holds items " + chunk.getFirstIndex() + " to " + last + " of a job of " + total;
      }
      return null;
    }

    private boolean cancelled() {
      return ctx.store().status(jobId).map(s -> JobStates.isCancelled(s.getState())).orElse(false);
    }

    private void readExistingResults() {
      ctx.store().read(ctx.topics().jobItems(), jobId, initial.getResultsOffset(), record -> {
        try {
          for (JobItemResult r : ctx.store().decodeResults(record)) {
            if (version == null && r.getError() == null && r.getModelVersion() != null) {
              version = r.getModelVersion(); // the version its first answered rows ran on
            }
            if (r.getIndex() >= 0 && r.getIndex() < total && !done.get(r.getIndex())) {
              done.set(r.getIndex());
              doneCount++;
              if (r.getError() != null) {
                failed++;
              }
            }
          }
        } catch (Throwable e) {
          guard.skipped("a result of job " + jobId, record.topic(), record.partition(), record.offset(), e);
        }
        return doneCount < total;
      });
      if (doneCount > 0) {
        log.info("Job {}: resuming with {} of {} items already done", jobId, doneCount, total);
      }
    }

    /**
     * Sends the chunk's items that have no result, packed ({@link RowPacker}); false when the job
     * should stop. Packs are cut at the end of each chunk, so a chunk's rows are all sent before
     * the next chunk is read.
     */
    private boolean dispatch(BatchJob chunk) throws InterruptedException {
      List<JobItem> items = chunk.getItems();
      RowPacker packer = new RowPacker(rule);
      for (int i = 0; i < items.size(); i++) {
        int index = chunk.getFirstIndex() + i;
        synchronized (lock) {
          if (index >= total || done.get(index)) {
            continue;
          }
        }
        JobItem item = items.get(i);
        if (item.getError() != null) {
          if (!leading || cancelled()) {
            return false;
          }
          write(List.of(result(index, item.getClientId(), null, List.of(), new InferenceError(ErrorCode.BAD_INPUT, item.getError()), 1)));
          continue;
        }
        if (version() == null) { // the job's version is not chosen yet: this row goes alone, and is awaited
          if (!sendWhenFree(Pack.alone(index, item)) || !awaitAnswer(index)) {
            return false;
          }
          packer = new RowPacker(rule); // (still empty) with the output size that reply showed
          continue;
        }
        long packStart = System.nanoTime();
        List<Pack> ready = packer.add(index, item);
        stages.add(JobStages.Stage.PACK, System.nanoTime() - packStart);
        for (Pack pack : ready) {
          if (!sendWhenFree(pack)) {
            return false;
          }
        }
      }
      for (Pack pack : packer.flush()) {
        if (!sendWhenFree(pack)) {
          return false;
        }
      }
      return true;
    }

    /** Waits for a job slot, then sends the pack (and first any rows queued to go alone); false when the job should stop. */
    private boolean sendWhenFree(Pack pack) throws InterruptedException {
      if (!sendAlone()) {
        return false;
      }
      if (!takeSlot()) {
        return false;
      }
      send(pack, 1);
      progress();
      return true;
    }

    /** Takes a job slot of the capacity, counted in flight; false (holding none) when the job should stop. */
    private boolean takeSlot() throws InterruptedException {
      if (!leading || cancelled()) {
        return false;
      }
      long waitStart = System.nanoTime();
      try {
        while (!ctx.capacity().awaitJob(200)) {
          progress();
          if (!leading || cancelled()) {
            return false;
          }
        }
      } finally {
        stages.add(JobStages.Stage.SLOT_WAIT, System.nanoTime() - waitStart);
      }
      if (!leading || cancelled()) {
        ctx.capacity().releaseJob();
        return false;
      }
      synchronized (lock) {
        inFlight++;
      }
      return true;
    }

    /** Sends, one by one, the rows of failed packs; false when the job should stop. */
    private boolean sendAlone() throws InterruptedException {
      Pack.Member m;
      while ((m = alone.poll()) != null) {
        synchronized (lock) {
          if (done.get(m.index())) {
            continue;
          }
        }
        if (!takeSlot()) {
          return false;
        }
        send(new Pack(List.of(m)), 1);
        progress();
      }
      return true;
    }

    /** Waits until row {@code index} has its result (so the version is chosen, or the next row asks again); false to stop. */
    private boolean awaitAnswer(int index) throws InterruptedException {
      synchronized (lock) {
        while (!done.get(index) && leading) {
          lock.wait(200);
          progressLocked();
        }
      }
      return leading && !cancelled();
    }

    private String requestId(Pack pack) {
      return pack.single() ? jobId + "-" + pack.firstIndex() : jobId + "-" + pack.firstIndex() + "x" + pack.members().size();
    }

    private void send(Pack pack, int attempt) {
      if (attempt == 1) {
        synchronized (lock) {
          packsSent++;
        }
      }
      long packStart = System.nanoTime();
      List<Tensor> inputs = pack.inputs();
      long sendStart = System.nanoTime();
      stages.add(JobStages.Stage.PACK, sendStart - packStart);
      InferenceRequest request = InferenceRequest.newBuilder()
          .setId(requestId(pack))
          .setServiceModel(initial.getServiceModel())
          .setVersion(version())
          .setInputs(inputs)
          .setOutputs(pack.outputs())
          .build();
      CompletableFuture<InferenceReply> sent = ctx.requests().send(request, ctx.items().timeoutMs(), null);
      long sentAt = System.nanoTime();
      stages.add(JobStages.Stage.SEND, sentAt - sendStart);
      sent.whenComplete((reply, failure) -> {
        long answeredAt = System.nanoTime();
        stages.request(answeredAt - sentAt);
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
        boolean transientFailure = cause != null
            || (reply.getError() != null && (reply.getError().getCode() == ErrorCode.OVERLOADED
                || reply.getError().getCode() == ErrorCode.NOT_READY || reply.getError().getCode() == ErrorCode.DEADLINE_EXCEEDED));
        if (transientFailure && attempt <= ctx.items().retries() && leading && !cancelled()) {
          // keeps its job slot; routed afresh after the pause (a version's partitions may have moved)
          RETRY_PAUSES.schedule(() -> resend(pack, attempt + 1), retryPauseMs(attempt), TimeUnit.MILLISECONDS);
          return;
        }
        settle(pack, reply, cause, attempt, answeredAt);
      });
    }

    /** Sends a pack again after a pause; a send that throws settles the pack with that failure. */
    private void resend(Pack pack, int attempt) {
      try {
        send(pack, attempt);
      } catch (RuntimeException e) {
        settle(pack, null, e, attempt, System.nanoTime());
      }
    }

    /** Writes the pack's results and gives its job slot back. */
    private void settle(Pack pack, InferenceReply reply, Throwable cause, int attempt, long answeredAt) {
      try {
        answer(pack, reply, cause, attempt);
      } finally {
        stages.add(JobStages.Stage.RESULTS, System.nanoTime() - answeredAt);
        ctx.capacity().releaseJob();
        synchronized (lock) {
          inFlight--;
          lock.notifyAll();
        }
      }
    }

    /**
     * Writes one result per member of the pack. A packed request answered with an error that is
     * not about the transport (BAD_INPUT, MODEL_ERROR...), or whose outputs cannot be cut back per
     * row, gives no result: its rows are queued to go again alone, so one bad row fails only itself.
     */
    private void answer(Pack pack, InferenceReply reply, Throwable cause, int attempt) {
      List<Pack.Member> members = pack.members();
      List<JobItemResult> results = new ArrayList<>(members.size());
      if (cause instanceof TimeoutException) {
        for (Pack.Member m : members) {
          results.add(result(m.index(), m.item().getClientId(), null, List.of(), new InferenceError(ErrorCode.DEADLINE_EXCEEDED,
              "no reply within " + ctx.items().timeoutMs() + " ms after " + attempt + " attempts"), attempt));
        }
        write(results);
        return;
      }
      if (cause != null) {
        for (Pack.Member m : members) {
          results.add(result(m.index(), m.item().getClientId(), null, List.of(), new InferenceError(ErrorCode.UNKNOWN,
              "the request could not be queued: " + cause.getClass().getSimpleName()), attempt));
        }
        write(results);
        return;
      }
      if (reply.getError() != null) {
        if (!pack.single()) {
          retryAlone(pack, reply.getError().getCode() + " " + SafeText.clean(reply.getError().getMessage()));
          return;
        }
        for (Pack.Member m : members) {
          results.add(result(m.index(), m.item().getClientId(), reply.getModelVersion(), List.of(),
              new InferenceError(reply.getError().getCode(), SafeText.clean(reply.getError().getMessage())), attempt));
        }
        write(results);
        return;
      }
      List<List<Tensor>> outputs;
      try {
        outputs = pack.split(reply.getOutputs());
      } catch (IllegalArgumentException e) { // only a pack is cut: a single row's outputs are kept as they came
        retryAlone(pack, e.getMessage());
        return;
      }
      if (pack.single()) {
        learnOutputSize(outputs.get(0), members.get(0).rows());
      }
      for (int i = 0; i < members.size(); i++) {
        Pack.Member m = members.get(i);
        results.add(result(m.index(), m.item().getClientId(), reply.getModelVersion(), outputs.get(i), null, attempt));
      }
      write(results);
    }

    /**
     * Packs from now on count at least this row's output bytes per row (the first row goes alone,
     * so its reply sizes the packs before any is sent).
     */
    private void learnOutputSize(List<Tensor> outputs, int rows) {
      long bytes = 0;
      for (Tensor t : outputs) {
        bytes += t.getData().remaining();
      }
      long perRow = bytes / Math.max(1, rows);
      synchronized (lock) {
        PackRule before = rule;
        rule = before.seenOutput(perRow);
        if (rule != before && before.seenOutputBytesPerRow() == 0 && before.packs()) {
          log.info("Job {}: a row's reply holds {} bytes of outputs; its packs carry at most {} rows ({} bytes per request)",
              jobId, perRow, Math.max(1, Math.min(rule.maxRows(), rule.maxBytes() / Math.max(1, perRow))), rule.maxBytes());
        }
      }
    }

    /** Queues the rows of a failed pack to go alone, unless the job stops (they then keep no result). */
    private void retryAlone(Pack pack, String why) {
      synchronized (lock) {
        packsSplit++;
      }
      if (!leading || cancelled()) {
        return;
      }
      log.debug("Job {}: the pack of rows {} to {} failed ({}); sending them one by one", jobId, pack.firstIndex(),
          pack.members().get(pack.members().size() - 1).index(), why);
      alone.addAll(pack.members());
    }

    private JobItemResult result(int index, String clientId, String modelVersion, List<Tensor> outputs, InferenceError error,
        int attempts) {
      // The all-fields constructor: one result per row, and the builder's per-field checks and copies showed in profiles.
      return new JobItemResult(jobId, index, clientId, modelVersion, error != null ? List.of() : outputs, error, attempts,
          ctx.clock().getAsLong());
    }

    /**
     * Writes the results of one request's rows (one row, or a pack's) as one {@link JobItemResults}
     * record, or as several where together they would pass the bytes a pack may carry (so a record
     * of results fits wherever the reply it came from did); rows that already have a result are
     * left out. Each row written counts as done at once; a record the broker then refuses fails the
     * job's run (its rows are sent again by the next run).
     */
    private void write(List<JobItemResult> results) {
      List<JobItemResult> fresh = new ArrayList<>(results.size());
      synchronized (lock) {
        if (!leading) {
          return; // lost the lead: the next leader sends them again
        }
        for (JobItemResult r : results) {
          if (done.get(r.getIndex())) {
            continue;
          }
          if (version == null && r.getError() == null && r.getModelVersion() != null) {
            version = r.getModelVersion(); // the job's version from now on
            log.info("Job {} runs on version {} of {} (the version that answered its first row)", jobId, version,
                initial.getServiceModel());
          }
          fresh.add(r);
          done.set(r.getIndex());
          doneCount++;
          if (r.getError() != null) {
            failed++;
          }
        }
        for (List<JobItemResult> part : byBytes(fresh, rule.maxBytes())) {
          writeRecord(part);
        }
      }
      for (JobItemResult r : fresh) {
        if (r.getError() == null) {
          ctx.metrics().jobItem(initial.getServiceModel());
        } else {
          ctx.metrics().jobItem(initial.getServiceModel(), Kind.of(r.getError().getCode()));
        }
      }
    }

    /** Sends one record of results (caller holds the lock); a failure is kept for the run's end. */
    private void writeRecord(List<JobItemResult> part) {
      int first = part.get(0).getIndex();
      int last = part.get(part.size() - 1).getIndex();
      ctx.producer().send(ctx.store().results().record(0, jobId, new JobItemResults(jobId, part)), (md, e) -> {
        if (e != null) {
          writeFailure.compareAndSet(null, e);
          log.error("Job {}: the results of items {} to {} could not be written: {}", jobId, first, last, e.toString());
        }
      });
    }

    /** Waits for every request in flight, sending alone the rows of packs that fail meanwhile. */
    private void drain() throws InterruptedException {
      while (leading) {
        if (!sendAlone()) {
          alone.clear(); // the job stops: those rows keep no result
        }
        synchronized (lock) {
          if (inFlight == 0 && alone.isEmpty()) {
            return;
          }
          lock.wait(200);
          progressLocked();
        }
      }
    }

    private void progress() {
      synchronized (lock) {
        progressLocked();
      }
    }

    private void progressLocked() {
      long now = ctx.clock().getAsLong();
      if (now - lastProgress < PROGRESS_EVERY_MS || !leading) {
        return;
      }
      lastProgress = now;
      rate.add(now, doneCount);
      if (!cancelled()) {
        ctx.store().publishLater(status(JobStates.RUNNING, null, now));
      }
    }

    private JobStatus status(String state, String message, long now) {
      synchronized (lock) {
        boolean running = !JobStates.isFinal(state);
        return JobStatus.newBuilder(initial)
            .setState(state)
            .setDone(doneCount)
            .setFailed(failed)
            .setStartedAt(startedAt)
            .setUpdatedAt(now)
            .setRatePerSecond(running ? rate.rate() : 0)
            .setRunner(ctx.gatewayId())
            .setMessage(message)
            .setVersion(version)
            .build();
      }
    }
  }

  /**
   * Results cut into records of at most about {@code limit} bytes each ({@link #resultBytes}), in
   * order; a result alone over the limit still gets a record of its own (the reply it came from
   * passed the same limits).
   */
  static List<List<JobItemResult>> byBytes(List<JobItemResult> results, long limit) {
    return ByteParts.cut(results, JobRunner::resultBytes, limit);
  }

  /** About how many bytes a result takes in a record: its outputs' data, its error's text, and room for the rest. */
  static long resultBytes(JobItemResult r) {
    long bytes = 128;
    for (Tensor t : r.getOutputs()) {
      bytes += t.getData().remaining() + 16L * t.getShape().size() + t.getName().length();
    }
    if (r.getError() != null && r.getError().getMessage() != null) {
      bytes += 3L * r.getError().getMessage().length();
    }
    return bytes;
  }

  @Override
  public void close() {
    open = false;
    leader.wakeup();
  }
}
