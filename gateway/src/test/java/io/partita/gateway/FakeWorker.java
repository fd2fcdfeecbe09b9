package io.partita.gateway;

import io.partita.avro.ErrorCode;
import io.partita.avro.InferenceError;
import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.common.KafkaHeaders;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.common.serde.RecordCodec;
import io.partita.testkit.KafkaFixture;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * A stand-in worker for tests that need replies a real model never gives. By request id:
 * {@code hold-*} gets no reply; {@code code-<ErrorCode>-*} gets that error with a message holding a
 * file path and a stack trace line (which must never reach an HTTP answer); a request whose first
 * input holds the value {@link #POISON} gets BAD_INPUT (as a worker refuses one bad row of a batch);
 * anything else gets its first input back as the output {@code output}.
 */
final class FakeWorker implements AutoCloseable {
  /** An input value that makes the whole request BAD_INPUT. */
  static final float POISON = -999f;
  static final String ERROR_MESSAGE = "failed at /opt/partita/models/demo-mlp/1/model.onnx\n\tat ai.onnxruntime.OrtSession.run(OrtSession.java:1)";

  private final KafkaConsumer<String, byte[]> consumer;
  private final KafkaProducer<String, byte[]> producer = KafkaFixture.producer();
  private final RecordCodec<InferenceRequest> requests = Codecs.singleObject().codec(InferenceRequest.class);
  private final RecordCodec<InferenceReply> replies = Codecs.singleObject().codec(InferenceReply.class);
  private final Thread thread;
  private final Map<String, Integer> partitionOf = new ConcurrentHashMap<>();
  private final java.util.Queue<Long> rowsPerRequest = new java.util.concurrent.ConcurrentLinkedQueue<>();
  private volatile boolean running = true;
  /** The host its replies say they ran on ({@code instance} = host/cpu-partition). */
  static final String HOST = "fake-host";

  FakeWorker(Topics topics, List<String> serviceModels) {
    // every demo service model is on the one request topic of its base model
    consumer = KafkaFixture.consumer(serviceModels.stream().map(m -> topics.requests(io.partita.models.demo.DemoMlp.MODEL_NAME))
        .distinct().toArray(String[]::new));
    thread = new Thread(this::loop, "fake-worker");
    thread.start();
  }

  private void loop() {
    try {
      while (running) {
        for (ConsumerRecord<String, byte[]> record : consumer.poll(Duration.ofMillis(100))) {
          InferenceRequest request = requests.decode(record.topic(), record.value());
          String id = request.getId();
          partitionOf.put(id, record.partition());
          if (id.startsWith("hold-")) {
            continue;
          }
          InferenceReply.Builder reply = InferenceReply.newBuilder().setId(id).setServiceModel(request.getServiceModel()).setModelVersion("1")
              .setInstance(HOST + "/cpu-" + record.partition());
          if (!request.getInputs().isEmpty() && !request.getInputs().get(0).getShape().isEmpty()) {
            rowsPerRequest.add(request.getInputs().get(0).getShape().get(0));
          }
          if (id.startsWith("code-")) {
            reply.setError(new InferenceError(ErrorCode.valueOf(id.split("-")[1]), ERROR_MESSAGE));
          } else if (poisoned(request)) {
            reply.setError(new InferenceError(ErrorCode.BAD_INPUT, "input 'input': a row holds " + POISON));
          } else {
            reply.setOutputs(List.of(io.partita.avro.Tensor.newBuilder(request.getInputs().get(0)).setName("output").build()));
          }
          String to = KafkaHeaders.get(record.headers(), KafkaHeaders.REPLY_TO);
          ProducerRecord<String, byte[]> out = new ProducerRecord<>(to, id, replies.encode(to, reply.build()));
          KafkaHeaders.put(out.headers(), KafkaHeaders.CORRELATION_ID, KafkaHeaders.get(record.headers(), KafkaHeaders.CORRELATION_ID));
          producer.send(out);
        }
      }
    } finally {
      consumer.close();
      producer.close();
    }
  }

  private static boolean poisoned(InferenceRequest request) {
    if (request.getInputs().isEmpty() || !"FP32".equals(request.getInputs().get(0).getDatatype())) {
      return false;
    }
    java.nio.ByteBuffer data = request.getInputs().get(0).getData().duplicate().order(java.nio.ByteOrder.LITTLE_ENDIAN);
    while (data.remaining() >= 4) {
      if (data.getFloat() == POISON) {
        return true;
      }
    }
    return false;
  }

  /** The leading dimension of every request read so far, in the order read. */
  List<Long> rowsPerRequest() {
    return List.copyOf(rowsPerRequest);
  }

  /** The partition of its request topic the request with this id was read from, or null if it was not read. */
  Integer partitionOf(String requestId) {
    return partitionOf.get(requestId);
  }

  @Override
  public void close() throws InterruptedException {
    running = false;
    thread.join(10_000);
  }
}
