package io.partita.gateway.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.partita.avro.JobStatus;
import io.partita.avro.Route;
import io.partita.avro.RouteInstance;
import io.partita.common.Topic;
import io.partita.common.Topics;
import io.partita.common.health.Loop;
import io.partita.common.health.LoopGuard;
import io.partita.common.serde.Codecs;
import io.partita.gateway.health.GatewayLoops;
import io.partita.gateway.jobs.JobStates;
import io.partita.gateway.jobs.JobStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * "Every loop survives any one record", for the gateway loops other than the reply
 * router (which {@code GatewayHardeningIT} poisons through a real broker): the route table, the job
 * status follower and the demand reporter, fed through Kafka's mock clients so that each record and
 * failure is exactly the one the test names.
 */
class LoopsSurvivePoisonTest {
  private static final Codecs CODECS = Codecs.singleObject();

  private static MockConsumer<String, byte[]> consumerOf(String topic, long endOffset) {
    MockConsumer<String, byte[]> consumer = new MockConsumer<>("earliest");
    TopicPartition tp = new TopicPartition(topic, 0);
    consumer.updatePartitions(topic, List.of(new PartitionInfo(topic, 0, null, null, null)));
    consumer.updateBeginningOffsets(Map.of(tp, 0L));
    consumer.updateEndOffsets(Map.of(tp, endOffset));
    return consumer;
  }

  private static ConsumerRecord<String, byte[]> record(String topic, long offset, String key, byte[] value) {
    return new ConsumerRecord<>(topic, 0, offset, key, value);
  }

  @Test
  void shouldPassOverPoisonedRoutesAndKeepTheGoodOnes() throws Exception {
    Topic<Route> routes = new Topics("p").planRoutes(CODECS);
    String topic = routes.name();
    MockConsumer<String, byte[]> consumer = consumerOf(topic, 4);
    Route good = Route.newBuilder().setServiceModel("demo").setRequestTopic("p.requests.demo").setReadyInstances(1)
        .setInstances(List.of(RouteInstance.newBuilder().setInstanceId("demo#0").setHost("host-a").setSlot("cpu-0")
            .setReady(true).setReason(null).setPartitions(List.of(1)).setInFlight(0).setQueueDepth(0).build()))
        .build();
    consumer.schedulePollTask(() -> {
      consumer.addRecord(record(topic, 0, "demo-a", "garbage".getBytes(StandardCharsets.UTF_8)));
      consumer.addRecord(record(topic, 1, null, routes.encode(good)));
      consumer.addRecord(record(topic, 2, "demo", routes.encode(good)));
      consumer.addRecord(record(topic, 3, "demo-b", new byte[] {(byte) 0xC3, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 'x'}));
    });
    consumer.schedulePollTask(() -> consumer.setPollException(new KafkaException("broker went away")));
    GatewayLoops loops = new GatewayLoops();
    LoopGuard guard = loops.register(GatewayLoops.ROUTES);
    RouteTable table = new RouteTable(consumer, routes, guard);
    Thread thread = new Thread(table, "test-routes");
    thread.start();
    try {
      table.caughtUp().get(10, TimeUnit.SECONDS);
      // The failed poll made it NOT_READY for a moment; the next good poll made it READY again
      await().atMost(Duration.ofSeconds(10)).until(() -> guard.faultCount() == 1 && guard.loop().isReady());
      assertThat(table.route("demo")).isEqualTo(good);
      assertThat(table.route("demo-a")).isNull();
      assertThat(guard.skippedCount()).isEqualTo(3);
      assertThat(table.reading()).isTrue();
    } finally {
      table.close();
      thread.join(5000);
    }
    assertThat(guard.loop().snapshot().state()).isEqualTo(Loop.State.STOPPED);
  }

  @Test
  void shouldPassOverJobStatusesThatCannotBeDecodedOrRun() throws Exception {
    Topics topics = new Topics("p");
    String topic = topics.jobStatus();
    MockConsumer<String, byte[]> consumer = consumerOf(topic, 3);
    JobStatus good = JobStatus.newBuilder().setJobId("job-1").setServiceModel("demo").setVersion(null).setState(JobStates.QUEUED)
        .setTotal(3).setDone(0).setFailed(0).setChunks(1).setInputOffset(0).setResultsOffset(0)
        .setCreatedAt(1).setStartedAt(0).setUpdatedAt(1).setRatePerSecond(0).setRunner(null).setMessage(null).build();
    JobStatus huge = JobStatus.newBuilder(good).setJobId("job-2").setTotal(Integer.MAX_VALUE).build();
    consumer.schedulePollTask(() -> {
      consumer.addRecord(record(topic, 0, "job-0", "garbage".getBytes(StandardCharsets.UTF_8)));
      consumer.addRecord(record(topic, 1, "job-2", CODECS.codec(JobStatus.class).encode(topic, huge)));
      consumer.addRecord(record(topic, 2, "job-1", CODECS.codec(JobStatus.class).encode(topic, good)));
    });
    GatewayLoops loops = new GatewayLoops();
    LoopGuard guard = loops.register(GatewayLoops.JOB_STATUS);
    JobStore store = new JobStore(topics, null, null, () -> consumer, CODECS, System::currentTimeMillis, guard);
    Thread thread = new Thread(store, "test-job-status");
    thread.start();
    try {
      store.caughtUp().get(10, TimeUnit.SECONDS);
      await().atMost(Duration.ofSeconds(10)).until(() -> guard.loop().isReady());
      assertThat(store.all()).containsExactly(good);
      assertThat(store.nextToRun()).isEqualTo(good);
      assertThat(guard.skippedCount()).isEqualTo(2);
    } finally {
      store.close();
      thread.join(5000);
    }
  }

  @Test
  void shouldKeepReportingDemandAfterAReportFails() {
    MockProducer<String, byte[]> producer = new MockProducer<>(true, null, new StringSerializer(), new ByteArraySerializer());
    GatewayLoops loops = new GatewayLoops();
    LoopGuard guard = loops.register(GatewayLoops.DEMAND);
    DemandReporter reporter = new DemandReporter(Map.of("demo", "demo"), new Topics("p"), producer, null,
        CODECS, System::currentTimeMillis, guard);
    reporter.record("demo");
    reporter.run();
    assertThat(producer.history()).hasSize(1);

    producer.close(); // every send now throws: before, the exception ended the scheduled task for good
    reporter.run();
    reporter.run();
    assertThat(guard.faultCount()).isEqualTo(2);
    assertThat(guard.loop().isReady()).isTrue();
  }
}
