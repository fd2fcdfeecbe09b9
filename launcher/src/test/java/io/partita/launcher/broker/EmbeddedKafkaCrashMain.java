package io.partita.launcher.broker;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The child JVM of {@link EmbeddedKafkaCrashIT}: {@code write PORT DIR N} starts the embedded broker,
 * writes records {@code 0..N-1} to topic {@code kept} with {@code acks=all}, prints
 * {@code ACKED N} once the broker acknowledged all of them and then waits to be killed;
 * {@code read PORT DIR} starts the broker on the same directory, prints {@code BROKER_UP_MS} (the
 * start's duration) and {@code READ} with every value found in {@code kept}, and exits.
 */
public final class EmbeddedKafkaCrashMain {
  static final String TOPIC = "kept";

  private EmbeddedKafkaCrashMain() {}

  public static void main(String[] args) throws Exception {
    int port = Integer.parseInt(args[1]);
    Path dir = Path.of(args[2]);
    long start = System.nanoTime();
    EmbeddedKafka kafka = new EmbeddedKafka(port, dir);
    kafka.start();
    System.out.println("BROKER_UP_MS " + (System.nanoTime() - start) / 1_000_000);
    if (args[0].equals("write")) {
      write(kafka.bootstrapServers(), Integer.parseInt(args[3]));
      System.out.flush();
      Thread.currentThread().join(); // until SIGKILL: no clean shutdown, as after kill -9 of partita local
    } else {
      System.out.println("READ " + String.join(",", read(kafka.bootstrapServers())));
      kafka.close();
    }
  }

  private static void write(String bootstrap, int count) throws Exception {
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
      admin.createTopics(Set.of(new NewTopic(TOPIC, 1, (short) 1))).all().get(60, TimeUnit.SECONDS);
    }
    Map<String, Object> props = Map.of("bootstrap.servers", bootstrap, "acks", "all",
        "key.serializer", StringSerializer.class.getName(), "value.serializer", StringSerializer.class.getName());
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
      for (int i = 0; i < count; i++) {
        producer.send(new ProducerRecord<>(TOPIC, Integer.toString(i))).get(60, TimeUnit.SECONDS);
      }
    }
    System.out.println("ACKED " + count);
  }

  private static List<String> read(String bootstrap) {
    Map<String, Object> props = Map.of("bootstrap.servers", bootstrap,
        "key.deserializer", StringDeserializer.class.getName(), "value.deserializer", StringDeserializer.class.getName());
    List<String> values = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
      TopicPartition partition = new TopicPartition(TOPIC, 0);
      consumer.assign(List.of(partition));
      consumer.seekToBeginning(List.of(partition));
      long end = consumer.endOffsets(List.of(partition), Duration.ofSeconds(60)).get(partition);
      while (consumer.position(partition, Duration.ofSeconds(60)) < end) {
        for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofSeconds(1))) {
          values.add(record.value());
        }
      }
    }
    return values;
  }
}
