package io.partita.gateway.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.avro.ErrorCode;
import io.partita.avro.InferenceError;
import io.partita.avro.JobItemResult;
import io.partita.avro.JobItemResults;
import io.partita.avro.Tensor;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.gateway.health.GatewayLoops;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** The rows of one request written as one results record, and read back, with records written one row each before. */
class JobResultRecordsTest {
  private static final Codecs CODECS = Codecs.singleObject();
  private static final Topics TOPICS = new Topics("p");

  private static JobItemResult result(String job, int index, int outputBytes) {
    Tensor out = Tensor.newBuilder().setName("output").setDatatype("FP32").setShape(List.of(1L, (long) outputBytes / 4))
        .setData(ByteBuffer.allocate(outputBytes)).build();
    return new JobItemResult(job, index, "line-" + index, "1", List.of(out), null, 1, 7L);
  }

  @Test
  void shouldCutResultsIntoRecordsUnderTheLimitInOrder() {
    List<JobItemResult> rows = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      rows.add(result("job-1", i, 1000));
    }
    long each = JobRunner.resultBytes(rows.get(0));
    assertThat(each).isGreaterThan(1000);

    List<List<JobItemResult>> parts = JobRunner.byBytes(rows, 3 * each);
    assertThat(parts).hasSize(4).allSatisfy(p -> assertThat(p.size()).isLessThanOrEqualTo(3));
    assertThat(parts.stream().flatMap(List::stream).toList()).isEqualTo(rows);
    // Everything in one record when it fits; a row alone over the limit still gets its own record.
    assertThat(JobRunner.byBytes(rows, Long.MAX_VALUE)).hasSize(1);
    assertThat(JobRunner.byBytes(rows, 10)).hasSize(10);
    assertThat(JobRunner.byBytes(List.of(), 10)).isEmpty();
    // An error's message counts too.
    JobItemResult failed = new JobItemResult("job-1", 3, null, null, List.of(), new InferenceError(ErrorCode.BAD_INPUT,
        "x".repeat(5000)), 1, 7L);
    assertThat(JobRunner.resultBytes(failed)).isGreaterThan(5000);
  }

  @Test
  void shouldReadResultRecordsAndRecordsOfOneRowAndPassOverGarbage() {
    String topic = TOPICS.jobItems();
    byte[] oneRow = TOPICS.jobItemsOneByOne(CODECS).encode(result("job-1", 0, 8)); // as runners wrote before
    byte[] twoRows = TOPICS.jobItems(CODECS).encode(new JobItemResults("job-1", List.of(result("job-1", 1, 8), result("job-1", 2, 8))));
    byte[] otherJob = TOPICS.jobItems(CODECS).encode(new JobItemResults("job-2", List.of(result("job-2", 0, 8))));
    MockConsumer<String, byte[]> consumer = new MockConsumer<>("earliest");
    TopicPartition tp = new TopicPartition(topic, 0);
    consumer.updatePartitions(topic, List.of(new PartitionInfo(topic, 0, null, null, null)));
    consumer.updateBeginningOffsets(Map.of(tp, 0L));
    consumer.updateEndOffsets(Map.of(tp, 4L));
    consumer.schedulePollTask(() -> {
      consumer.addRecord(new ConsumerRecord<>(topic, 0, 0, "job-1", oneRow));
      consumer.addRecord(new ConsumerRecord<>(topic, 0, 1, "job-1", "garbage".getBytes(StandardCharsets.UTF_8)));
      consumer.addRecord(new ConsumerRecord<>(topic, 0, 2, "job-2", otherJob));
      consumer.addRecord(new ConsumerRecord<>(topic, 0, 3, "job-1", twoRows));
    });
    MockConsumer<String, byte[]> follower = new MockConsumer<>("earliest");
    List<MockConsumer<String, byte[]>> handed = new ArrayList<>(List.of(follower, consumer));
    JobStore store = new JobStore(TOPICS, null, null, () -> handed.remove(0), CODECS, System::currentTimeMillis,
        new GatewayLoops().register(GatewayLoops.JOB_STATUS));
    List<Integer> read = new ArrayList<>();
    store.readResults("job-1", 0, r -> read.add(r.getIndex()));
    assertThat(read).containsExactly(0, 1, 2);

    assertThatThrownBy(() -> store.decodeResults(new ConsumerRecord<>(topic, 0, 1, "job-1", "garbage".getBytes(StandardCharsets.UTF_8))))
        .isInstanceOf(RuntimeException.class);
  }
}
