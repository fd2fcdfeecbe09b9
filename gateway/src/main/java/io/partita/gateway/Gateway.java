package io.partita.gateway;

import com.sun.net.httpserver.HttpServer;
import io.partita.common.Service;
import io.partita.common.TopicSpec;
import io.partita.common.Topics;
import io.partita.common.kafka.TopicAdmin;
import io.partita.gateway.http.HttpApi;
import io.partita.gateway.kafka.ReplyRouter;
import io.partita.gateway.kafka.RequestProducer;
import io.partita.models.repo.ModelRepository;
import io.partita.models.repo.RepositoryIndex;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
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
 * The HTTP front door: Open Inference Protocol v2 over HTTP/JSON, backed by Kafka. Each infer call
 * becomes one record on {@code <prefix>.requests.<service model>}; replies come back on this
 * gateway's own topic {@code <prefix>.replies.<gateway id>}. HTTP handlers never block on Kafka:
 * the answer is written when the reply's future completes.
 */
public final class Gateway implements Service {
  private static final Logger log = LoggerFactory.getLogger(Gateway.class);

  private final GatewayConfig config;
  private final Topics topics;
  private HttpServer http;
  private ExecutorService executor;
  private KafkaProducer<String, byte[]> producer;
  private ReplyRouter router;
  private Thread routerThread;

  public Gateway(GatewayConfig config) {
    this.config = config;
    this.topics = new Topics(config.topicPrefix());
  }

  @Override
  public void start() throws Exception {
    RepositoryIndex index = ModelRepository.scan(config.modelRepository());
    String replyTopic = topics.replies(config.gatewayId());
    List<TopicSpec> specs = new ArrayList<>(topics.infrastructure());
    specs.add(TopicSpec.stream(replyTopic, 1));
    index.serviceModels().keySet().forEach(m -> specs.add(TopicSpec.stream(topics.requests(m), 4)));
    try (Admin admin = Admin.create(base())) {
      TopicAdmin.ensure(admin, specs, (short) 3);
    }
    producer = new KafkaProducer<>(producerProps());
    router = new ReplyRouter(new KafkaConsumer<>(consumerProps()), replyTopic, config.codecs());
    routerThread = new Thread(router, "partita-gateway-replies");
    routerThread.start();
    router.ready().get(60, TimeUnit.SECONDS);
    RequestProducer requests = new RequestProducer(producer, router, topics, replyTopic, config.codecs(), System::currentTimeMillis);
    http = HttpServer.create(new InetSocketAddress(config.httpPort()), 1024);
    executor = Executors.newFixedThreadPool(Math.max(4, Runtime.getRuntime().availableProcessors() * 2), r -> {
      Thread t = new Thread(r, "partita-http");
      t.setDaemon(true);
      return t;
    });
    http.setExecutor(executor);
    http.createContext("/", new HttpApi(index, requests, config.timeoutMs(), config.maxBodyBytes()));
    http.start();
    log.info("Gateway {} listening on http://localhost:{}/v2 for {}", config.gatewayId(), port(), index.serviceModels().keySet());
  }

  /** The port HTTP listens on (useful when configured as 0). */
  public int port() {
    return http.getAddress().getPort();
  }

  private Properties base() {
    Properties p = new Properties();
    p.putAll(config.kafka());
    p.put("bootstrap.servers", config.bootstrapServers());
    return p;
  }

  private Properties producerProps() {
    Properties p = base();
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.putIfAbsent(ProducerConfig.LINGER_MS_CONFIG, "1");
    p.putIfAbsent(ProducerConfig.MAX_BLOCK_MS_CONFIG, "10000");
    return p;
  }

  private Properties consumerProps() {
    Properties p = base();
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.putIfAbsent(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "10");
    return p;
  }

  @Override
  public void close() {
    if (http != null) {
      http.stop(0);
      http = null;
    }
    if (executor != null) {
      executor.shutdownNow();
      executor = null;
    }
    if (router != null) {
      router.close();
      try {
        routerThread.join(5000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      router = null;
    }
    if (producer != null) {
      producer.close();
      producer = null;
    }
  }
}
