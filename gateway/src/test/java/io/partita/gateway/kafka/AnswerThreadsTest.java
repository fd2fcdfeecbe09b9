package io.partita.gateway.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.partita.avro.InferenceRequest;
import io.partita.avro.Tensor;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.gateway.health.GatewayLoops;
import io.partita.gateway.routing.Routing;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

class AnswerThreadsTest {
  @Test
  void shouldAnswerADeadlineOnTheGatewaysAnswerThreadsNotOnTheJvmsTimeoutThread() {
    // Before: the 504 was written to the client on the JVM's one CompletableFuture delay thread, so
    // one client slow to read could hold up every deadline in the process.
    ReplyRouter router = new ReplyRouter(new MockConsumer<>("latest"), new Topics("p").replies("g", Codecs.singleObject()),
        new GatewayLoops().register(GatewayLoops.REPLIES));
    try {
      MockProducer<String, byte[]> producer = new MockProducer<>(true, null, new StringSerializer(), new ByteArraySerializer());
      RequestProducer requests = new RequestProducer(producer, router, Routing.any(),
          m -> new Topics("p").requests(m, Codecs.singleObject()));
      InferenceRequest request = InferenceRequest.newBuilder().setId("r-1").setServiceModel("demo").setVersion(null)
          .setInputs(List.of(Tensor.newBuilder().setName("input").setDatatype("FP32").setShape(List.of(1L))
              .setData(ByteBuffer.allocate(4)).build()))
          .setOutputs(List.of()).build();
      AtomicReference<String> answeredOn = new AtomicReference<>();
      requests.send(request, 50, null).whenComplete((reply, failure) -> answeredOn.set(Thread.currentThread().getName()));
      await().atMost(Duration.ofSeconds(5)).until(() -> answeredOn.get() != null);
      assertThat(answeredOn.get()).startsWith("partita-gateway-answers-");
      assertThat(router.inFlight()).isZero();
    } finally {
      router.close();
    }
  }
}
