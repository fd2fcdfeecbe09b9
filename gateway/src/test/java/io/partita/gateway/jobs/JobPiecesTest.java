package io.partita.gateway.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.avro.JobItem;
import io.partita.avro.JobStatus;
import io.partita.gateway.refusal.Refusal;
import io.partita.gateway.server.HttpStatus;
import io.partita.models.repo.ElementType;
import io.partita.models.repo.ModelSignature;
import io.partita.models.repo.TensorSpec;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class JobPiecesTest {
  private static final ModelSignature SIG = new ModelSignature(
      List.of(TensorSpec.of("input", ElementType.FLOAT, -1, 8)), List.of(TensorSpec.of("output", ElementType.FLOAT, -1, 4)));
  private static final String GOOD = "{\"id\":\"a\",\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,8],\"data\":[1,2,3,4,5,6,7,8]}]}";

  @Test
  void shouldNumberLinesSkippingBlankOnesAndKeepBadLinesAsErrors() {
    String body = GOOD + "\r\n\n{nope\n" + "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,3],\"data\":[1,2,3]}]}\n" + GOOD;
    List<JobItem> items = JobLines.parse(body.getBytes(StandardCharsets.UTF_8), SIG, 100);
    assertThat(items).hasSize(4);
    assertThat(items.get(0).getError()).isNull();
    assertThat(items.get(0).getClientId()).isEqualTo("a");
    assertThat(items.get(0).getInputs().get(0).getData().remaining()).isEqualTo(32);
    assertThat(items.get(1).getError()).contains("not valid JSON");
    assertThat(items.get(2).getError()).isEqualTo("input 'input'.shape[1]: expected 8, got 3");
    assertThat(items.get(3).getError()).isNull();
  }

  @Test
  void shouldRefuseEmptyAndOversizedJobs() {
    assertThatThrownBy(() -> JobLines.parse("\n \n".getBytes(StandardCharsets.UTF_8), SIG, 10))
        .isInstanceOfSatisfying(Refusal.class, e -> assertThat(HttpStatus.of(e.kind())).isEqualTo(400));
    assertThatThrownBy(() -> JobLines.parse((GOOD + "\n" + GOOD).getBytes(StandardCharsets.UTF_8), SIG, 1))
        .isInstanceOfSatisfying(Refusal.class, e -> assertThat(HttpStatus.of(e.kind())).isEqualTo(413));
  }

  @Test
  void shouldCutChunksInOrderWithinTheSizeTarget() {
    List<JobItem> items = JobLines.parse((GOOD + "\n").repeat(20_000).getBytes(StandardCharsets.UTF_8), SIG, 100_000);
    List<List<JobItem>> chunks = JobLines.chunks(items);
    assertThat(chunks.size()).isGreaterThan(1);
    assertThat(chunks.stream().mapToInt(List::size).sum()).isEqualTo(20_000);
    List<JobItem> flat = new ArrayList<>();
    chunks.forEach(flat::addAll);
    assertThat(flat).containsExactlyElementsOf(items);
  }

  @Test
  void shouldHandOnResultsInInputOrderKeepingTheFirstOfEachIndex() {
    ResultOrder<String> order = new ResultOrder<>(4);
    List<String> out = new ArrayList<>();
    assertThat(order.offer(2, "c", out::add)).isTrue();
    assertThat(order.offer(0, "a", out::add)).isTrue();
    assertThat(out).containsExactly("a");
    assertThat(order.offer(0, "a-again", out::add)).isFalse();
    assertThat(order.offer(2, "c-again", out::add)).isFalse();
    assertThat(order.offer(9, "z", out::add)).isFalse();
    assertThat(order.offer(1, "b", out::add)).isTrue();
    assertThat(out).containsExactly("a", "b", "c");
    order.finish(i -> "missing-" + i, out::add);
    assertThat(out).containsExactly("a", "b", "c", "missing-3");
    assertThat(order.duplicates()).isEqualTo(3);
    assertThat(order.complete()).isTrue();
  }

  @Test
  void shouldMeasureTheRateOverTheWindowAndGiveAnEta() {
    RateWindow w = new RateWindow(10_000);
    assertThat(w.rate()).isZero();
    w.add(0, 0);
    w.add(1000, 100);
    w.add(2000, 300);
    assertThat(w.rate()).isEqualTo(150.0);
    w.add(20_000, 300);
    assertThat(w.rate()).isLessThan(150.0);
    assertThat(RateWindow.etaSeconds(300, 150)).isEqualTo(2);
    assertThat(RateWindow.etaSeconds(300, 0)).isEqualTo(-1);
    assertThat(RateWindow.etaSeconds(0, 0)).isZero();
  }

  @Test
  void shouldPauseBeforeEachRetryLongerThanBeforeTheLastUpToTwoSeconds() {
    assertThat(List.of(1, 2, 3, 4, 5, 60).stream().map(JobRunner::retryPauseMs).toList())
        .containsExactly(250L, 500L, 1000L, 2000L, 2000L, 2000L);
  }

  @Test
  void shouldLetAFinalStateWinOverALaterProgressReport() {
    JobStatus running = status(JobStates.RUNNING, 10);
    JobStatus cancelled = status(JobStates.CANCELLED, 5);
    JobStatus later = status(JobStates.RUNNING, 20);
    JobStatus cancelling = status(JobStates.CANCELLING, 6);
    assertThat(JobStates.merge(cancelling, later)).isSameAs(cancelling);
    assertThat(JobStates.merge(cancelling, cancelled)).isSameAs(cancelled);
    assertThat(JobStates.merge(cancelled, later)).isSameAs(cancelled);
    assertThat(JobStates.merge(running, later)).isSameAs(later);
    assertThat(JobStates.merge(later, running)).isSameAs(later);
    assertThat(JobStates.merge(null, running)).isSameAs(running);
  }

  private static JobStatus status(String state, long updatedAt) {
    return JobStatus.newBuilder().setJobId("j").setServiceModel("demo").setState(state).setTotal(1).setChunks(1)
        .setInputOffset(0).setResultsOffset(0).setCreatedAt(0).setUpdatedAt(updatedAt).build();
  }

  private static JobStatus status(String state, int total, int done) {
    return JobStatus.newBuilder().setJobId("job-1").setServiceModel("demo").setVersion(null).setState(state)
        .setTotal(total).setDone(done).setFailed(0).setChunks(Math.min(1, total)).setInputOffset(0).setResultsOffset(0)
        .setCreatedAt(1).setStartedAt(0).setUpdatedAt(1).setRatePerSecond(0).setRunner(null).setMessage(null).build();
  }

  @Test
  void shouldPassOverJobStatusesNoRunnerCouldRun() {
    assertThat(JobStates.problem(status(JobStates.QUEUED, 10, 0))).isNull();
    assertThat(JobStates.problem(status(JobStates.DONE, 10, 10))).isNull();
    assertThat(JobStates.problem(status("EXPLODE", 10, 0))).contains("state");
    assertThat(JobStates.problem(status(JobStates.QUEUED, -1, 0))).contains("total");
    assertThat(JobStates.problem(status(JobStates.QUEUED, 2_000_000_000, 0))).contains("total");
    assertThat(JobStates.problem(status(JobStates.RUNNING, 10, 11))).contains("done");
    assertThat(JobStates.problem(JobStatus.newBuilder(status(JobStates.QUEUED, 10, 0)).setInputOffset(-5).build())).contains("offsets");
  }
}
