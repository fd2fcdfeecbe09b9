package io.partita.worker;

import io.partita.common.Service;
import io.partita.common.TopicSpec;
import io.partita.common.Topics;
import io.partita.common.kafka.TopicAdmin;
import io.partita.models.repo.ModelRepository;
import io.partita.models.repo.RepositoryIndex;
import io.partita.worker.kafka.RequestLoop;
import io.partita.worker.serving.ModelServer;
import io.partita.worker.serving.SessionFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The inference worker (first cut): serves every service model of its model repository from one
 * ONNX Runtime session per model version using all cores, consuming the request topics as one
 * member of the consumer group {@code <prefix>.workers}, so each request is served by exactly one
 * worker and a worker that dies hands its partitions, and their unanswered requests, to the others.
 */
public final class InferenceWorker implements Service {
  private static final Logger log = LoggerFactory.getLogger(InferenceWorker.class);

  private final WorkerConfig config;
  private final Topics topics;
  private ModelServer server;
  private KafkaProducer<String, byte[]> producer;
  private RequestLoop loop;
  private Thread thread;

  public InferenceWorker(WorkerConfig config) {
    this.config = config;
    this.topics = new Topics(config.topicPrefix());
  }

  @Override
  public void start() throws Exception {
    RepositoryIndex index = ModelRepository.scan(config.modelRepository());
    server = new ModelServer(index, new SessionFactory(config.intraOpThreads(), config.cuda()), config.hostId() + "/all");
    List<TopicSpec> specs = new ArrayList<>(topics.infrastructure());
    for (String serviceModel : server.serviceModels()) {
      specs.add(TopicSpec.stream(topics.requests(serviceModel), 4));
    }
    try (Admin admin = Admin.create(adminProps())) {
      TopicAdmin.ensure(admin, specs, (short) 3);
    }
    producer = new KafkaProducer<>(producerProps());
    loop = new RequestLoop(new KafkaConsumer<>(consumerProps()), producer, server, topics, config.codecs(), System::currentTimeMillis);
    thread = new Thread(loop, "partita-worker");
    thread.start();
    log.info("Inference worker {} serving {} on {} ({})", config.hostId(), server.serviceModels(), server.provider(), config.bootstrapServers());
  }

  /** The failure that stopped the request loop, or null while it runs. */
  public Throwable failure() {
    return loop == null ? null : loop.failure();
  }

  public ModelServer server() {
    return server;
  }

  private Properties base() {
    Properties p = new Properties();
    p.putAll(config.kafka());
    p.put("bootstrap.servers", config.bootstrapServers());
    return p;
  }

  private Properties adminProps() {
    Properties p = base();
    p.put(AdminClientConfig.CLIENT_ID_CONFIG, "partita-worker-admin-" + config.hostId());
    return p;
  }

  private Properties producerProps() {
    Properties p = base();
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.LINGER_MS_CONFIG, "1");
    return p;
  }

  private Properties consumerProps() {
    Properties p = base();
    p.put(ConsumerConfig.GROUP_ID_CONFIG, config.topicPrefix() + ".workers");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    // A request topic created later is picked up within this many milliseconds.
    p.putIfAbsent(ConsumerConfig.METADATA_MAX_AGE_CONFIG, "5000");
    p.putIfAbsent(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "64");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    return p;
  }

  @Override
  public void close() {
    if (loop != null) {
      loop.stop();
      try {
        thread.join(10_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      loop = null;
    }
    if (producer != null) {
      producer.close();
      producer = null;
    }
    if (server != null) {
      server.close();
      server = null;
    }
  }
}
