package io.partita.cluster;

import io.partita.avro.InferenceRequest;
import io.partita.avro.Tensor;
import io.partita.common.KafkaHeaders;
import io.partita.common.serde.RecordCodec;
import io.partita.models.demo.DemoMlp;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** Demo-model requests as any Kafka client would produce them, and a producer configured like Partita's. */
final class Requests {
  private Requests() {}

  static InferenceRequest request(String id, String serviceModel, int seed) {
    float[][] rows = DemoMlp.sampleInput(1, seed);
    ByteBuffer b = ByteBuffer.allocate(rows[0].length * 4).order(ByteOrder.LITTLE_ENDIAN);
    for (float v : rows[0]) {
      b.putFloat(v);
    }
    b.flip();
    Tensor input = Tensor.newBuilder().setName(DemoMlp.INPUT).setDatatype("FP32")
        .setShape(List.of(1L, (long) rows[0].length)).setData(b).build();
    return InferenceRequest.newBuilder().setId(id).setServiceModel(serviceModel).setInputs(List.of(input)).build();
  }

  static ProducerRecord<String, byte[]> record(String topic, RecordCodec<InferenceRequest> codec, InferenceRequest request, String replyTo) {
    ProducerRecord<String, byte[]> r = new ProducerRecord<>(topic, request.getId(), codec.encode(topic, request));
    KafkaHeaders.put(r.headers(), KafkaHeaders.REPLY_TO, replyTo);
    KafkaHeaders.put(r.headers(), KafkaHeaders.CORRELATION_ID, request.getId());
    return r;
  }

  /** acks=all and idempotent, as Partita's own producers are; {@code extra} adds security settings. */
  static KafkaProducer<String, byte[]> producer(String bootstrap, Map<String, String> extra) {
    Properties p = new Properties();
    p.putAll(extra);
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    return new KafkaProducer<>(p);
  }
}
