package io.partita.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.partita.avro.ErrorCode;
import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.avro.Tensor;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.models.demo.DemoMlp;
import io.partita.models.demo.DemoRepository;
import io.partita.testkit.KafkaFixture;
import io.partita.worker.InferenceWorker;
import io.partita.worker.WorkerConfig;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Java client packing concurrent calls into shared records, against a real broker and a real
 * worker: fewer records than calls, every call answered with its own rows, a bad call failing alone.
 */
@ExtendWith(KafkaFixture.class)
class PackedCallsIT {
  private static final int CALLS = 120;

  @TempDir Path repo;

  /** With one request of a kind in flight at a time (Nagle's rule), and with two. */
  @ParameterizedTest(name = "{0} in flight")
  @ValueSource(ints = {1, 2})
  void shouldPackConcurrentCallsAndAnswerEachWithItsOwnRowsAndFailOnlyTheBadOne(int inFlight) throws Exception {
    DemoRepository.writeTo(repo);
    Topics topics = new Topics(KafkaFixture.uniquePrefix("client-packed"));
    PartitaClient.Config config = PartitaClient.Config.of(KafkaFixture.bootstrapServers()).withTopicPrefix(topics.prefix())
        .withTimeout(Duration.ofSeconds(60)).withPacking(new PartitaClient.Packing(64, Duration.ofMillis(50), inFlight));
    try (InferenceWorker worker = new InferenceWorker(WorkerConfig.from(Settings.of(Map.of(
            "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(), "topic.prefix", topics.prefix(),
            "model.repo", repo.toString(), "worker.threads", "1"))));
         PartitaClient client = PartitaClient.start(config)) {
      worker.start();
      // Warm: the first call waits for the worker's slots; the rest then arrive while calls are in flight.
      assertThat(client.infer(DemoMlp.MODEL_NAME, "demo-c", List.of(PartitaClientIT.input(DemoMlp.sampleInput(1, 0)))).get(120, TimeUnit.SECONDS).getError())
          .isNull();

      List<float[][]> inputs = new ArrayList<>();
      List<String> models = new ArrayList<>();
      List<InferenceRequest> requests = new ArrayList<>();
      for (int i = 0; i < CALLS; i++) {
        float[][] x = DemoMlp.sampleInput(1 + i % 3, 100 + i);
        String model = i % 2 == 0 ? "demo-a" : "demo-c";
        Tensor t = PartitaClientIT.input(x);
        if (i == 41) { // one call whose data is 4 bytes short of its shape: the worker refuses it
          t.setData(ByteBuffer.wrap(new byte[t.getData().remaining() - 4]));
        }
        inputs.add(x);
        models.add(model);
        requests.add(InferenceRequest.newBuilder().setId("call-" + i).setServiceModel(model).setVersion(null).setInputs(List.of(t)).build());
      }
      List<CompletableFuture<InferenceReply>> answers = new ArrayList<>();
      for (InferenceRequest r : requests) {
        answers.add(client.send(DemoMlp.MODEL_NAME, r, Duration.ofSeconds(60)));
      }

      for (int i = 0; i < CALLS; i++) {
        InferenceReply reply = answers.get(i).get(60, TimeUnit.SECONDS);
        assertThat(reply.getId()).isEqualTo("call-" + i);
        if (i == 41) {
          assertThat(reply.getError()).as("the bad call").isNotNull();
          assertThat(reply.getError().getCode()).isEqualTo(ErrorCode.BAD_INPUT);
          continue;
        }
        assertThat(reply.getError()).as("call %d", i).isNull();
        assertOwnRows(reply, inputs.get(i), models.get(i));
      }
      assertThat(client.inFlight()).isZero();

      long records = requestRecords(topics.requests(DemoMlp.MODEL_NAME));
      // The warm-up call, the packs of two service models (the first calls of each alone, up to
      // the depth in flight), and the bad call's pack sent again call by call: far fewer records than calls.
      assertThat(records).as("request records for %d calls", CALLS + 1).isLessThan(CALLS / 2);
    }
  }

  private static void assertOwnRows(InferenceReply reply, float[][] x, String serviceModel) {
    Tensor out = reply.getOutputs().get(0);
    assertThat(out.getShape()).containsExactly((long) x.length, 4L);
    float[][] expected = DemoMlp.reference(x, DemoMlp.adapterForServiceModel(serviceModel).orElseThrow(), reply.getModelVersion());
    ByteBuffer data = out.getData().duplicate().order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < x.length * 4; i++) {
      assertThat(data.getFloat()).isCloseTo(expected[i / 4][i % 4], within(1e-4f));
    }
  }

  /** Records on the topic: the sum of its partitions' end offsets. */
  private static long requestRecords(String topic) throws Exception {
    try (Admin admin = KafkaFixture.admin()) {
      Map<TopicPartition, OffsetSpec> ends = new HashMap<>();
      admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions()
          .forEach(p -> ends.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest()));
      long total = 0;
      for (var info : admin.listOffsets(ends).all().get().values()) {
        total += info.offset();
      }
      return total;
    }
  }
}
