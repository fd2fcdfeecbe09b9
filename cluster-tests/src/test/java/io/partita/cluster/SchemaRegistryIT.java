package io.partita.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.common.TopicSpec;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.common.kafka.TopicAdmin;
import io.partita.common.serde.Codecs;
import io.partita.common.serde.RecordCodec;
import io.partita.common.serde.RegistrySettings;
import io.partita.common.serde.SchemaRegistryClient;
import io.partita.common.serde.SchemaRegistryException;
import io.partita.models.demo.DemoRepository;
import io.partita.testkit.KafkaFixture;
import io.partita.worker.InferenceWorker;
import io.partita.worker.WorkerConfig;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumWriter;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code serde.mode=registry} against a real Apicurio Registry (3.0.9, its Confluent-compatible
 * API) and a real broker: the worker and a plain client exchange a request and its reply in the
 * registry wire format, a generic registry-aware reader decodes the reply knowing nothing but the
 * registry, a compatible schema change is accepted and read by the worker, and an incompatible one
 * is refused by the registry's BACKWARD rule (HTTP 409).
 */
@Tag("registry")
@ExtendWith(ClusterKafka.class)
class SchemaRegistryIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static ApicurioRegistry registry;

  @TempDir Path repo;

  @BeforeAll
  static void startRegistry() throws Exception {
    registry = ApicurioRegistry.start();
  }

  @AfterAll
  static void stopRegistry() throws Exception {
    if (registry != null) {
      registry.close();
    }
  }

  @Test
  void shouldServeARequestInRegistryModeAndRefuseAnIncompatibleSchemaChange() throws Exception {
    DemoRepository.writeTo(repo);
    Topics topics = new Topics(KafkaFixture.uniquePrefix("registry"));
    String requestTopic = topics.requests("demo-mlp");
    String replyTopic = topics.replies("registry-client");
    String bootstrap = ClusterKafka.bootstrapServers();
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      TopicAdmin.ensure(admin, List.of(TopicSpec.stream(replyTopic, 1)), (short) 1);
    }
    Codecs codecs = Codecs.registry(RegistrySettings.of(registry.ccompatUrl()));
    RecordCodec<InferenceRequest> requests = codecs.codec(InferenceRequest.class);
    RecordCodec<InferenceReply> replies = codecs.codec(InferenceReply.class);

    try (InferenceWorker worker = new InferenceWorker(WorkerConfig.from(Settings.of(Map.of(
            "kafka.bootstrap.servers", bootstrap,
            "topic.prefix", topics.prefix(),
            "host.id", "registry-host",
            "model.repo", repo.toString(),
            "worker.threads", "1",
            "serde.mode", "registry",
            "serde.registry.url", registry.ccompatUrl()))));
         ReplyCollector collector = new ReplyCollector(bootstrap, Map.of(), replyTopic, 1, replies, id -> { });
         KafkaProducer<String, byte[]> producer = Requests.producer(bootstrap, Map.of())) {
      worker.start();

      // Given a request in the registry wire format
      InferenceRequest request = Requests.request("reg-1", "demo", 5);
      byte[] value = requests.encode(requestTopic, request);
      assertThat(value[0]).isZero();
      producer.send(Requests.record(requestTopic, requests, request, replyTopic)).get(30, TimeUnit.SECONDS);

      // Then the worker answers in the same format
      Awaitility.await("the reply to reg-1").atMost(Duration.ofSeconds(60)).until(() -> collector.replies().containsKey("reg-1"));
      byte[] replyBytes = collector.raw().get("reg-1");
      InferenceReply reply = collector.replies().get("reg-1");
      assertThat(reply.getError()).isNull();
      assertThat(reply.getId()).isEqualTo("reg-1");
      assertThat(reply.getOutputs()).isNotEmpty();

      // And a consumer that has only the registry (no Partita classes) reads the reply generically
      assertThat(replyBytes[0]).isZero();
      int replySchemaId = ByteBuffer.wrap(replyBytes, 1, 4).getInt();
      Schema fromRegistry = new Schema.Parser().parse(JSON.readTree(registry.get("/schemas/ids/" + replySchemaId)).path("schema").asText());
      GenericRecord generic = new GenericDatumReader<GenericRecord>(fromRegistry)
          .read(null, DecoderFactory.get().binaryDecoder(replyBytes, 5, replyBytes.length - 5, null));
      assertThat(generic.get("id").toString()).isEqualTo("reg-1");
      assertThat(JSON.readTree(registry.get("/subjects")).toString())
          .contains(requestTopic + "-value").contains(replyTopic + "-value");
      assertThat(registry.get("/config/" + requestTopic + "-value")).contains("BACKWARD");

      // When a compatible change (a new field with a default) is registered and written with
      SchemaRegistryClient client = codecs.registryClient();
      String subject = requestTopic + "-value";
      Schema compatible = withField(InferenceRequest.getClassSchema(), "priority", "int", 0);
      int compatibleId = client.register(subject, compatible);
      assertThat(compatibleId).isNotEqualTo(ByteBuffer.wrap(value, 1, 4).getInt());
      producer.send(evolvedRecord(requestTopic, replyTopic, compatible, compatibleId, Requests.request("reg-2", "demo", 6))).get(30, TimeUnit.SECONDS);
      // Then the worker reads the newer record with its older class and answers it
      Awaitility.await("the reply to the evolved request").atMost(Duration.ofSeconds(60)).until(() -> collector.replies().containsKey("reg-2"));
      assertThat(collector.replies().get("reg-2").getError()).isNull();

      // When an incompatible change (a new field without a default) is registered
      Schema incompatible = withField(InferenceRequest.getClassSchema(), "tenant", "string", null);
      SchemaRegistryException refused = catchThrowableOfType(SchemaRegistryException.class, () -> client.register(subject, incompatible));
      // Then the registry refuses it under the subject's BACKWARD rule
      assertThat(refused).isNotNull();
      assertThat(refused.status()).isEqualTo(409);
      assertThat(refused).hasMessageContaining("HTTP 409").hasMessageContaining(subject);
      assertThat(worker.failure()).isNull();
      System.out.println("registry: incompatible change refused -> " + refused.getMessage());
    }
  }

  /** The schema with one more field appended; {@code defaultValue} null means no default. */
  private static Schema withField(Schema schema, String name, String type, Object defaultValue) throws Exception {
    ObjectNode json = (ObjectNode) JSON.readTree(schema.toString());
    ObjectNode field = JSON.createObjectNode().put("name", name).put("type", type);
    if (defaultValue != null) {
      field.set("default", JSON.valueToTree(defaultValue));
    }
    ((ArrayNode) json.get("fields")).add(field);
    return new Schema.Parser().parse(json.toString());
  }

  /** A request as a newer client would write it: the evolved schema's id and a value for the new field. */
  private static ProducerRecord<String, byte[]> evolvedRecord(String topic, String replyTo, Schema evolved, int id, InferenceRequest request) throws Exception {
    ByteArrayOutputStream plain = new ByteArrayOutputStream();
    BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(plain, null);
    new SpecificDatumWriter<InferenceRequest>(InferenceRequest.getClassSchema(), SpecificData.getForClass(InferenceRequest.class)).write(request, encoder);
    encoder.flush();
    GenericRecord record = new GenericDatumReader<GenericRecord>(InferenceRequest.getClassSchema(), evolved, GenericData.get())
        .read(null, DecoderFactory.get().binaryDecoder(plain.toByteArray(), null));
    record.put("priority", 7);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(0);
    out.write(ByteBuffer.allocate(4).putInt(id).array());
    BinaryEncoder evolvedEncoder = EncoderFactory.get().binaryEncoder(out, null);
    new GenericDatumWriter<GenericRecord>(evolved).write(record, evolvedEncoder);
    evolvedEncoder.flush();
    ProducerRecord<String, byte[]> r = new ProducerRecord<>(topic, request.getId(), out.toByteArray());
    io.partita.common.KafkaHeaders.put(r.headers(), io.partita.common.KafkaHeaders.REPLY_TO, replyTo);
    io.partita.common.KafkaHeaders.put(r.headers(), io.partita.common.KafkaHeaders.CORRELATION_ID, request.getId());
    return r;
  }
}
