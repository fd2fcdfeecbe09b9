package io.partita.client;

import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.avro.Tensor;
import io.partita.common.EpochMicros;
import io.partita.common.KafkaHeaders;
import io.partita.common.TopicSpec;
import io.partita.common.Topics;
import io.partita.common.coalescing.CallCoalescer;
import io.partita.common.kafka.KafkaClients;
import io.partita.common.kafka.PendingCalls;
import io.partita.common.kafka.TopicAdmin;
import io.partita.common.log.RateLimitedLog;
import io.partita.common.packing.PackRule;
import io.partita.common.serde.Codecs;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asks Partita for inferences straight over Kafka, without the HTTP gateway: each request is one
 * record on {@code <prefix>.requests.<base model>} (the wire format of docs/wire-format.md), naming
 * its service model in the record and in the {@code service-model} header; one topic carries every
 * service model of a base model. The base model of a service model with a weight file is given per
 * call ({@link #infer(String, String, List)}) or once in the config ({@link Config#withBaseModel});
 * a service model with none given is taken to be a model served without weight files, whose topic
 * has its own name. The reply comes back on this client's own topic {@code <prefix>.replies.<client id>}, which it
 * creates if missing and reads from its end (assigned, no consumer group).
 *
 * <p>Guarantees: the future of a request completes once, with the reply (an error reply too: look
 * at {@link InferenceReply#getError()}), or with a {@link java.util.concurrent.TimeoutException}
 * at its deadline, or with the produce failure. The deadline also travels as the {@code deadline}
 * header, so a worker does not run a request nobody waits for. A second reply for the same request
 * (a worker restarted mid-batch may send one) and replies nobody waits for are dropped and counted
 * ({@link #repliesDropped()}). Request ids must be unique among the requests in flight.
 *
 * <p>With {@link Config#withPacking} on, concurrent calls of one service model, version and input
 * layout travel several to a record, their rows stacked, and each is still answered with its own
 * reply: a producer calling concurrently then pays the per-record costs of Kafka once per pack.
 *
 * <pre>{@code
 * try (PartitaClient client = PartitaClient.start(PartitaClient.Config.of("localhost:19092"))) {
 *   InferenceReply reply = client.infer("demo-mlp", "demo-a", List.of(tensor)).get();
 * }
 * }</pre>
 */
public final class PartitaClient implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(PartitaClient.class);

  /**
   * How to reach Partita.
   *
   * @param bootstrapServers Kafka bootstrap servers
   * @param topicPrefix Partita's topic prefix (default {@code partita})
   * @param clientId names the reply topic; keep it stable to reuse one topic, unique per running client
   * @param timeout the deadline of a request sent without its own
   * @param kafka extra Kafka client settings (security, for example)
   * @param codecs the record format, which must be the installation's ({@code serde.mode});
   *     {@code Codecs.from(settings)} builds it from settings
   * @param baseModels the base model of each service model built on another model (a LoRA adapter, say);
   *     a service model not listed is its own base model
   * @param packing how concurrent calls share request records ({@link #withPacking}); null: every
   *     call is its own record
   */
  public record Config(String bootstrapServers, String topicPrefix, String clientId, Duration timeout, Properties kafka, Codecs codecs,
                       Map<String, String> baseModels, Packing packing) {
    public Config {
      Objects.requireNonNull(bootstrapServers, "bootstrapServers");
      Objects.requireNonNull(topicPrefix, "topicPrefix");
      Objects.requireNonNull(clientId, "clientId");
      Objects.requireNonNull(timeout, "timeout");
      kafka = kafka == null ? new Properties() : kafka;
      codecs = codecs == null ? Codecs.singleObject() : codecs;
      baseModels = baseModels == null ? Map.of() : Map.copyOf(baseModels);
    }

    /** The settings before packing existed: every call is its own record. */
    public Config(String bootstrapServers, String topicPrefix, String clientId, Duration timeout, Properties kafka, Codecs codecs,
                  Map<String, String> baseModels) {
      this(bootstrapServers, topicPrefix, clientId, timeout, kafka, codecs, baseModels, null);
    }

    /** Defaults: prefix {@code partita}, a random client id, a 30 s deadline, single-object encoding. */
    public static Config of(String bootstrapServers) {
      return new Config(bootstrapServers, Topics.DEFAULT_PREFIX, "client-" + UUID.randomUUID().toString().substring(0, 8),
          Duration.ofSeconds(30), new Properties(), Codecs.singleObject(), Map.of());
    }

    public Config withTopicPrefix(String prefix) {
      return new Config(bootstrapServers, prefix, clientId, timeout, kafka, codecs, baseModels, packing);
    }

    public Config withClientId(String id) {
      return new Config(bootstrapServers, topicPrefix, id, timeout, kafka, codecs, baseModels, packing);
    }

    public Config withTimeout(Duration t) {
      return new Config(bootstrapServers, topicPrefix, clientId, t, kafka, codecs, baseModels, packing);
    }

    public Config withKafka(Properties settings) {
      return new Config(bootstrapServers, topicPrefix, clientId, timeout, settings, codecs, baseModels, packing);
    }

    public Config withCodecs(Codecs format) {
      return new Config(bootstrapServers, topicPrefix, clientId, timeout, kafka, format, baseModels, packing);
    }

    /** Says which base model a service model is built on, so its requests go to that model's topic. */
    public Config withBaseModel(String serviceModel, String baseModel) {
      Map<String, String> more = new HashMap<>(baseModels);
      more.put(serviceModel, baseModel);
      return new Config(bootstrapServers, topicPrefix, clientId, timeout, kafka, codecs, more, packing);
    }

    /**
     * Packs concurrent calls into shared request records, as the gateway does: a call goes at once,
     * alone, when no call of its service model, version and input layout is in flight; the calls
     * that come while one is in flight are stacked along their first dimension into one record,
     * sent when that call is answered, when {@code maxRows} rows or half the record limit are
     * reached, or {@code window} after the first of them came. Each call still gets its own reply
     * (its id, its rows) and fails at its own deadline. Turn it on only when every service model
     * this client calls has a dynamic first dimension on every input and output: a pack the worker
     * refuses (a fixed first dimension, one bad call) is sent again one call per request, which
     * answers every call correctly but pays for the pack in vain. Calls with parameters are never packed.
     */
    public Config withPacking(int maxRows, Duration window) {
      return withPacking(new Packing(maxRows, window));
    }

    /** Packs as {@link #withPacking(int, Duration)} does, with {@link Packing#inFlight()} and the rest as given. */
    public Config withPacking(Packing packing) {
      return new Config(bootstrapServers, topicPrefix, clientId, timeout, kafka, codecs, baseModels, packing);
    }

    /** The base model of a service model: as configured, else the service model itself. */
    public String baseModelOf(String serviceModel) {
      return baseModels.getOrDefault(serviceModel, serviceModel);
    }
  }

  /**
   * How concurrent calls share request records.
   *
   * @param maxRows the most rows one request record carries (2 to 65536)
   * @param window the longest a call waits for company while calls of its kind are in flight
   * @param inFlight requests of one kind in flight before calls wait for company (1 to 64; 1 is
   *     Nagle's rule, the default). More keeps the path busy while a pack is on its way, with
   *     smaller packs: worth it where the round trip, not the CPU, bounds the rate
   */
  public record Packing(int maxRows, Duration window, int inFlight) {
    public Packing {
      Objects.requireNonNull(window, "window");
      if (maxRows < 2 || maxRows > 65_536) {
        throw new IllegalArgumentException("packing maxRows must be 2 to 65536, got " + maxRows);
      }
      if (window.isNegative()) {
        throw new IllegalArgumentException("the packing window must not be negative, got " + window);
      }
      if (inFlight < 1 || inFlight > 64) {
        throw new IllegalArgumentException("packing inFlight must be 1 to 64, got " + inFlight);
      }
    }

    /** One request of a kind in flight at a time (Nagle's rule). */
    public Packing(int maxRows, Duration window) {
      this(maxRows, window, 1);
    }
  }

  /** A call the coalescer holds: where it goes and what waits for it. */
  private record HeldCall(String baseModel, CompletableFuture<InferenceReply> answer) {}

  private final Config config;
  private final Topics topics;
  private final String replyTopic;
  private final KafkaProducer<String, byte[]> producer;
  private final KafkaConsumer<String, byte[]> consumer;
  private final PendingCalls calls;
  private final RateLimitedLog warnings = new RateLimitedLog(log, 60_000);
  private final Thread thread;
  private volatile boolean running = true;
  /** Packs concurrent calls ({@link Config#withPacking}); null when packing is off. */
  private CallCoalescer<HeldCall> coalescer;
  private PackRule packRule;

  private PartitaClient(Config config) {
    this.config = config;
    this.topics = new Topics(config.topicPrefix());
    this.replyTopic = topics.replies(config.clientId());
    Codecs codecs = config.codecs();
    // A reply that cannot be read is skipped and its call keeps waiting: a forged record cannot end a call.
    this.calls = new PendingCalls(topics.replies(config.clientId(), codecs), PendingCalls.Unreadable.KEEP_WAITING, Runnable::run, System::currentTimeMillis);
    this.producer = new KafkaProducer<>(producerProps());
    this.consumer = new KafkaConsumer<>(consumerProps());
    this.thread = new Thread(this::readReplies, "partita-client-replies-" + config.clientId());
    this.thread.setDaemon(true);
  }

  /** Creates the reply topic if needed and starts reading it; returns once no reply can be missed. */
  public static PartitaClient start(Config config) {
    PartitaClient client = new PartitaClient(config);
    try {
      client.open();
      return client;
    } catch (RuntimeException e) {
      client.close();
      throw e;
    }
  }

  private void open() {
    long replyLimit;
    try (Admin admin = Admin.create(base())) {
      TopicAdmin.ensure(admin, List.of(TopicSpec.stream(replyTopic, 1)), (short) 3);
      replyLimit = config.packing() == null ? Long.MAX_VALUE : TopicAdmin.maxMessageBytes(admin, replyTopic);
    }
    KafkaClients.assignAtEnd(consumer, replyTopic, Duration.ofSeconds(30));
    thread.start();
    Packing packing = config.packing();
    if (packing != null) {
      packRule = PackRule.declared(packing.maxRows(), PackRule.bytesWithin(KafkaClients.maxRequestSize(producerProps()), replyLimit));
      coalescer = new CallCoalescer<>(TimeUnit.NANOSECONDS.toMicros(packing.window().toNanos()), packing.inFlight(), new CallCoalescer.Wire<>() {
        @Override
        public CompletableFuture<InferenceReply> send(InferenceRequest request, long timeoutMs, List<HeldCall> callers, int rows) {
          return calls.send(producer, topics.requests(callers.get(0).baseModel(), config.codecs()), null, request, timeoutMs, null);
        }

        @Override
        public void finish(HeldCall call, InferenceReply reply, Throwable failure) {
          if (failure != null) {
            call.answer().completeExceptionally(failure);
          } else {
            call.answer().complete(reply);
          }
        }
      }, "partita-client-packer-" + config.clientId());
    }
  }

  /**
   * Sends a request for {@code serviceModel} with a new id and the default deadline, to the topic of
   * its base model as the config says ({@link Config#baseModelOf}).
   */
  public CompletableFuture<InferenceReply> infer(String serviceModel, List<Tensor> inputs) {
    return infer(config.baseModelOf(serviceModel), serviceModel, inputs);
  }

  /** Sends a request for {@code serviceModel}, built on {@code baseModel}, with a new id and the default deadline. */
  public CompletableFuture<InferenceReply> infer(String baseModel, String serviceModel, List<Tensor> inputs) {
    return send(baseModel, InferenceRequest.newBuilder().setId(UUID.randomUUID().toString()).setServiceModel(serviceModel)
        .setVersion(null).setInputs(inputs).build(), config.timeout());
  }

  public CompletableFuture<InferenceReply> send(InferenceRequest request) {
    return send(request, config.timeout());
  }

  /** Sends a request to the topic of its service model's base model as the config says. */
  public CompletableFuture<InferenceReply> send(InferenceRequest request, Duration timeout) {
    return send(config.baseModelOf(request.getServiceModel()), request, timeout);
  }

  /**
   * Sends a request to {@code baseModel}'s topic; the future completes with its reply or fails at
   * {@code timeout}, with the produce failure, or with an {@link IllegalStateException} when a
   * request with the same id is in flight.
   */
  public CompletableFuture<InferenceReply> send(String baseModel, InferenceRequest request, Duration timeout) {
    CallCoalescer<HeldCall> packer = coalescer;
    if (packer != null) {
      HeldCall call = new HeldCall(baseModel, new CompletableFuture<>());
      try {
        if (packer.offer(call, request, packRule, timeout.toMillis())) {
          return call.answer();
        }
      } catch (IllegalStateException e) {
        return CompletableFuture.failedFuture(e);
      }
    }
    return calls.send(producer, topics.requests(baseModel, config.codecs()), null, request, timeout.toMillis(), null);
  }

  /**
   * Reads the reply topic until the client closes; survives any one record. A reply that cannot be
   * decoded (garbage, or a record declaring counts larger than itself, refused by the bounded
   * decoder) is skipped and counted, and the call it names keeps waiting for a real reply; a failing
   * poll is retried with back-off. Warnings are summarised, one line per cause per minute.
   */
  private void readReplies() {
    long backoffMs = 100;
    try {
      while (running) {
        try {
          for (ConsumerRecord<String, byte[]> record : consumer.poll(Duration.ofMillis(100))) {
            take(record);
          }
          backoffMs = 100;
        } catch (WakeupException e) {
          throw e;
        } catch (RuntimeException e) {
          warnings.warn("poll " + e.getClass().getSimpleName(), "Partita client {}: reading replies failed ({}); retrying in {} ms",
              config.clientId(), e.toString(), backoffMs);
          try {
            Thread.sleep(backoffMs);
          } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            return;
          }
          backoffMs = Math.min(10_000, backoffMs * 2);
        }
      }
    } catch (WakeupException e) {
      // closing
    } finally {
      calls.failAll("the Partita client was closed");
      consumer.close(Duration.ofSeconds(2));
    }
  }

  /**
   * When a reply arrived and what its worker stamped on it, for seeing where a round trip's time
   * went (diagnostics and benchmarks).
   *
   * @param ackedMicros when the broker acknowledged the request ({@link io.partita.common.EpochMicros}); 0 when
   *     the reply came before the acknowledgement
   * @param replyTimestampMs the reply record's timestamp (the worker's produce time)
   * @param receivedMicros when this client's reply loop got the record ({@link io.partita.common.EpochMicros})
   * @param stages the worker's {@code partita-stages} header, or null
   */
  public record ReplyTiming(String id, long ackedMicros, long replyTimestampMs, long receivedMicros, String stages) {}

  private volatile Consumer<ReplyTiming> timings;

  /** Hands the timing of every answered call to {@code listener}, on the reply thread (keep it cheap); null stops. */
  public void onReplyTiming(Consumer<ReplyTiming> listener) {
    this.timings = listener;
    calls.stampAcks(listener != null);
  }

  private void take(ConsumerRecord<String, byte[]> record) {
    long receivedMicros = EpochMicros.now();
    PendingCalls.Outcome outcome = calls.take(record);
    Consumer<ReplyTiming> listener = timings;
    if (listener != null && outcome.taken() == PendingCalls.Taken.ANSWERED) {
      try {
        listener.accept(new ReplyTiming(outcome.correlationId(), calls.takeAcked(outcome.correlationId()), record.timestamp(), receivedMicros,
            KafkaHeaders.get(record.headers(), KafkaHeaders.STAGES)));
      } catch (RuntimeException e) {
        warnings.warn("timing listener", "Partita client {}: the reply timing listener failed: {}", config.clientId(), e.toString());
      }
    }
    if (outcome.taken() == PendingCalls.Taken.UNREADABLE) {
      warnings.warn("undecodable reply", "Partita client {}: skipping {}-{}@{} for call {}: {}; the call keeps waiting",
          config.clientId(), record.topic(), record.partition(), record.offset(), outcome.correlationId(),
          String.valueOf(outcome.failure().getMessage()));
    }
  }

  /** Replies skipped because they could not be decoded. */
  public long repliesUndecodable() {
    return calls.undecodable();
  }

  /** The topic replies come back on. */
  public String replyTopic() {
    return replyTopic;
  }

  /** Request records waiting for a reply (a pack of calls counts once), and calls held for a pack. */
  public int inFlight() {
    CallCoalescer<HeldCall> packer = coalescer;
    return calls.inFlight() + (packer == null ? 0 : packer.held());
  }

  /** Replies dropped because nobody waited for them (late, foreign, or a duplicate). */
  public long repliesDropped() {
    return calls.dropped();
  }

  /** Of those, second replies for a request already answered. */
  public long duplicatesDropped() {
    return calls.duplicates();
  }

  private Properties base() {
    return KafkaClients.base(config.bootstrapServers(), config.kafka());
  }

  private Properties producerProps() {
    Properties p = KafkaClients.producer(config.bootstrapServers(), config.kafka());
    return p;
  }

  private Properties consumerProps() {
    Properties p = KafkaClients.consumer(config.bootstrapServers(), config.kafka());
    return p;
  }

  @Override
  public void close() {
    if (coalescer != null) { // before the reply loop ends: held calls are answered (failed), not lost
      coalescer.close();
    }
    running = false;
    if (thread.isAlive()) {
      consumer.wakeup();
      try {
        thread.join(5000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    } else {
      consumer.close(Duration.ofSeconds(2));
    }
    producer.close(Duration.ofSeconds(5));
  }
}
