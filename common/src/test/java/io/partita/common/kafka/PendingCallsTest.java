package io.partita.common.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.avro.ErrorCode;
import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.avro.Tensor;
import io.partita.common.KafkaHeaders;
import io.partita.common.serde.Codecs;
import io.partita.common.Topic;
import io.partita.common.Topics;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

class PendingCallsTest {
  private static final Codecs CODECS = Codecs.singleObject();
  private static final Topics TOPICS = new Topics("p");
  private static final Topic<InferenceReply> REPLIES = TOPICS.replies("me", CODECS);
  private static final Topic<InferenceRequest> DEMO = TOPICS.requests("demo", CODECS);
  private final MockProducer<String, byte[]> producer =
      new MockProducer<>(true, null, new StringSerializer(), new ByteArraySerializer());

  private static PendingCalls calls(PendingCalls.Unreadable unreadable) {
    return new PendingCalls(REPLIES, unreadable, Runnable::run, () -> 1_000L);
  }

  private static InferenceRequest request(String id) {
    return InferenceRequest.newBuilder().setId(id).setServiceModel("demo-a").setVersion(null)
        .setInputs(List.of(Tensor.newBuilder().setName("input").setDatatype("FP32").setShape(List.of(1L))
            .setData(ByteBuffer.allocate(4)).build()))
        .setOutputs(List.of()).build();
  }

  private static ConsumerRecord<String, byte[]> reply(String id, byte[] value) {
    ConsumerRecord<String, byte[]> record = new ConsumerRecord<>("p.replies.me", 0, 0, id, value);
    KafkaHeaders.put(record.headers(), KafkaHeaders.CORRELATION_ID, id);
    return record;
  }

  private static byte[] ok(String id) {
    return REPLIES.encode(InferenceReply.newBuilder().setId(id).setServiceModel("demo-a")
        .setModelVersion("1").setOutputs(List.of()).build());
  }

  @Test
  void shouldWriteTheWireFormatHeadersAndKeyOfARequest() {
    calls(PendingCalls.Unreadable.KEEP_WAITING).send(producer, DEMO, 2, request("r-1"), 500, "00-abc-def-01");
    ProducerRecord<String, byte[]> sent = producer.history().get(0);
    assertThat(sent.topic()).isEqualTo("p.requests.demo");
    assertThat(sent.partition()).isEqualTo(2);
    assertThat(sent.key()).isEqualTo("r-1");
    assertThat(KafkaHeaders.get(sent.headers(), KafkaHeaders.REPLY_TO)).isEqualTo("p.replies.me");
    assertThat(KafkaHeaders.get(sent.headers(), KafkaHeaders.CORRELATION_ID)).isEqualTo("r-1");
    assertThat(KafkaHeaders.get(sent.headers(), KafkaHeaders.SERVICE_MODEL)).isEqualTo("demo-a");
    assertThat(KafkaHeaders.get(sent.headers(), KafkaHeaders.DEADLINE)).isEqualTo("1500");
    assertThat(KafkaHeaders.get(sent.headers(), KafkaHeaders.TRACEPARENT)).isEqualTo("00-abc-def-01");
  }

  @Test
  void shouldRememberWhenTheBrokerAcknowledgedARequestOnlyWhileAckStampsAreOn() {
    PendingCalls calls = calls(PendingCalls.Unreadable.KEEP_WAITING);
    calls.send(producer, DEMO, null, request("unstamped"), 10_000, null);
    calls.stampAcks(true);
    long before = io.partita.common.EpochMicros.now();
    calls.send(producer, DEMO, null, request("stamped"), 10_000, null);

    assertThat(calls.takeAcked("unstamped")).isZero();
    assertThat(calls.takeAcked("stamped")).isBetween(before, io.partita.common.EpochMicros.now());
    assertThat(calls.takeAcked("stamped")).as("taken once").isZero();
  }

  @Test
  void shouldRefuseAnIdAlreadyInFlightWithoutSendingIt() {
    PendingCalls calls = calls(PendingCalls.Unreadable.KEEP_WAITING);
    calls.send(producer, DEMO, null, request("same"), 10_000, null);
    CompletableFuture<InferenceReply> second = calls.send(producer, DEMO, null, request("same"), 10_000, null);
    assertThat(second).isCompletedExceptionally();
    assertThat(failure(second)).isInstanceOf(IllegalStateException.class).hasMessageContaining("already in flight");
    assertThat(producer.history()).hasSize(1);
    assertThat(calls.inFlight()).isEqualTo(1);
  }

  @Test
  void shouldAnswerTheCallAndCountASecondReplyAsADuplicate() throws Exception {
    PendingCalls calls = calls(PendingCalls.Unreadable.KEEP_WAITING);
    CompletableFuture<InferenceReply> future = calls.send(producer, DEMO, null, request("r-2"), 10_000, null);
    assertThat(calls.take(reply("r-2", ok("r-2"))).taken()).isEqualTo(PendingCalls.Taken.ANSWERED);
    assertThat(future.get(1, TimeUnit.SECONDS).getId()).isEqualTo("r-2");
    assertThat(calls.take(reply("r-2", ok("r-2"))).taken()).isEqualTo(PendingCalls.Taken.DUPLICATE);
    assertThat(calls.take(reply("stranger", ok("stranger"))).taken()).isEqualTo(PendingCalls.Taken.FOREIGN);
    assertThat(calls.duplicates()).isEqualTo(1);
    assertThat(calls.foreign()).isEqualTo(1);
    assertThat(calls.dropped()).isEqualTo(2);
    assertThat(calls.inFlight()).isZero();
  }

  @Test
  void shouldTellALateReplyFromOneToARequestThisProcessNeverSent() {
    PendingCalls calls = calls(PendingCalls.Unreadable.KEEP_WAITING);
    // Given a call that ended at its deadline, and one whose request the producer refused
    CompletableFuture<InferenceReply> expired = calls.send(producer, DEMO, null, request("late-1"), 20, null);
    assertThat(failure(expired)).isInstanceOf(TimeoutException.class);
    MockProducer<String, byte[]> failing = new MockProducer<>(false, null, new StringSerializer(), new ByteArraySerializer());
    CompletableFuture<InferenceReply> refused = calls.send(failing, DEMO, null, request("late-2"), 10_000, null);
    failing.errorNext(new org.apache.kafka.common.errors.RecordTooLargeException("too big"));
    assertThat(refused).isCompletedExceptionally();

    // When their replies come after all, and replies to requests another process sent on this reply topic
    assertThat(calls.take(reply("late-1", ok("late-1"))).taken()).isEqualTo(PendingCalls.Taken.DROPPED);
    assertThat(calls.take(reply("late-2", ok("late-2"))).taken()).isEqualTo(PendingCalls.Taken.DROPPED);
    assertThat(calls.take(reply("someone-else-1", ok("someone-else-1"))).taken()).isEqualTo(PendingCalls.Taken.FOREIGN);
    assertThat(calls.take(reply("someone-else-2", ok("someone-else-2"))).taken()).isEqualTo(PendingCalls.Taken.FOREIGN);

    // Then all four are dropped, and only the two strangers count as foreign
    assertThat(calls.dropped()).isEqualTo(4);
    assertThat(calls.foreign()).isEqualTo(2);
    assertThat(calls.duplicates()).isZero();
  }

  @Test
  void shouldMakeAForeignIdFitForOneLogLine() {
    assertThat(PendingCalls.printable("id-1")).isEqualTo("id-1");
    assertThat(PendingCalls.printable("a\nb\u0000c")).isEqualTo("a?b?c");
    assertThat(PendingCalls.printable("x".repeat(100))).isEqualTo("x".repeat(80) + "...");
  }

  @Test
  void shouldAnswerAnUnreadableReplyAtOnceWithAnErrorWhenTheOwnerSaysSo() throws Exception {
    PendingCalls calls = calls(PendingCalls.Unreadable.ANSWER_WITH_ERROR);
    CompletableFuture<InferenceReply> future = calls.send(producer, DEMO, null, request("r-3"), 10_000, null);
    PendingCalls.Outcome outcome = calls.take(reply("r-3", new byte[] {(byte) 0xC3, 0x01, 1, 2, 3}));
    assertThat(outcome.taken()).isEqualTo(PendingCalls.Taken.UNREADABLE);
    InferenceReply answer = future.get(1, TimeUnit.SECONDS);
    assertThat(answer.getError().getCode()).isEqualTo(ErrorCode.UNKNOWN);
    assertThat(answer.getError().getMessage()).contains("could not be read");
    assertThat(calls.undecodable()).isEqualTo(1);
  }

  @Test
  void shouldKeepTheCallWaitingForARealReplyAfterAnUnreadableOne() throws Exception {
    PendingCalls calls = calls(PendingCalls.Unreadable.KEEP_WAITING);
    CompletableFuture<InferenceReply> future = calls.send(producer, DEMO, null, request("r-4"), 10_000, null);
    assertThat(calls.take(reply("r-4", new byte[] {0, 1, 2})).taken()).isEqualTo(PendingCalls.Taken.UNREADABLE);
    assertThat(future).isNotDone();
    calls.take(reply("r-4", ok("r-4")));
    assertThat(future.get(1, TimeUnit.SECONDS).getError()).isNull();
  }

  @Test
  void shouldForgetACallAtItsDeadline() {
    PendingCalls calls = calls(PendingCalls.Unreadable.KEEP_WAITING);
    CompletableFuture<InferenceReply> future = calls.send(producer, DEMO, null, request("r-5"), 20, null);
    assertThat(failure(future)).isInstanceOf(TimeoutException.class);
    assertThat(calls.inFlight()).isZero();
  }

  @Test
  void shouldFailEveryWaitingCallOnClose() {
    PendingCalls calls = calls(PendingCalls.Unreadable.KEEP_WAITING);
    CompletableFuture<InferenceReply> a = calls.send(producer, DEMO, null, request("a"), 10_000, null);
    CompletableFuture<InferenceReply> b = calls.send(producer, DEMO, null, request("b"), 10_000, null);
    calls.failAll("closing for the test");
    for (CompletableFuture<InferenceReply> f : List.of(a, b)) {
      assertThat(failure(f)).isInstanceOf(IllegalStateException.class).hasMessage("closing for the test");
    }
    assertThat(calls.inFlight()).isZero();
  }

  @Test
  void shouldFailTheCallWhenTheProducerFails() {
    MockProducer<String, byte[]> failing = new MockProducer<>(false, null, new StringSerializer(), new ByteArraySerializer());
    PendingCalls calls = calls(PendingCalls.Unreadable.KEEP_WAITING);
    CompletableFuture<InferenceReply> future = calls.send(failing, DEMO, null, request("r-6"), 10_000, null);
    failing.errorNext(new org.apache.kafka.common.errors.RecordTooLargeException("too big"));
    assertThat(failure(future)).isInstanceOf(org.apache.kafka.common.errors.RecordTooLargeException.class);
    assertThat(calls.inFlight()).isZero();
  }

  /** The failure of a future, unwrapped from the CompletionException dependent stages add. */
  private static Throwable failure(CompletableFuture<?> future) {
    Throwable e = future.handle((r, x) -> x).join();
    return e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
  }
}
