package io.partita.profiler.idle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.partita.profiler.measure.GroupingResult;
import io.partita.profiler.measure.TimingResult;
import io.partita.profiler.run.ProfileSink;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Waiting for idle slots: when the gate answers at once, when it waits, and what a wait that runs out says. */
class IdleGateTest {
  private final AtomicLong clock = new AtomicLong(1_000_000);
  private final IdleSettings settings = new IdleSettings(true, 0, 1.0, 60_000, 30_000);

  private SlotLoad busy(long at) {
    return new SlotLoad("s0", "READY", 2, 0, 0, at);
  }

  private SlotLoad idle(long at) {
    return new SlotLoad("s0", "READY", 0, 0, 0, at);
  }

  @Test
  void shouldAnswerUncheckedAtOnceWhenTheCheckIsOff() throws Exception {
    IdleGate gate = new IdleGate(IdleSettings.off(), clock::get);

    assertThat(gate.await(60_000).condition()).isEqualTo(MeasuringCondition.UNCHECKED);
  }

  @Test
  void shouldAnswerNoServingOrIdleAtOnceOnceTheStatusesAreRead() throws Exception {
    IdleGate gate = new IdleGate(settings, clock::get);
    gate.caughtUp();

    assertThat(gate.await(60_000)).extracting(IdleGate.Decision::condition, IdleGate.Decision::waitedMillis)
        .containsExactly(MeasuringCondition.NO_SERVING, 0L);
    gate.update(idle(clock.get()));
    assertThat(gate.await(60_000).condition()).isEqualTo(MeasuringCondition.IDLE);
  }

  @Test
  void shouldSayBusyAfterWaitWhenTheSlotsStayBusyForTheWholeWait() throws Exception {
    IdleGate gate = new IdleGate(settings, clock::get);
    gate.caughtUp();
    gate.update(busy(clock.get()));

    IdleGate.Decision d = gate.await(0);

    assertThat(d.condition()).isEqualTo(MeasuringCondition.BUSY_AFTER_WAIT);
    assertThat(d.reading().inFlight()).isEqualTo(2);
  }

  @Test
  void shouldWaitUntilAStatusSaysTheSlotsWentIdle() {
    IdleGate gate = new IdleGate(settings, clock::get);
    gate.caughtUp();
    gate.update(busy(clock.get()));

    CompletableFuture<IdleGate.Decision> waiting = CompletableFuture.supplyAsync(() -> {
      try {
        return gate.await(60_000);
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
    });
    await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5)).until(() -> !waiting.isDone());
    clock.addAndGet(4000);
    gate.update(idle(clock.get()));

    IdleGate.Decision d = waiting.orTimeout(10, TimeUnit.SECONDS).join();
    assertThat(d.condition()).isEqualTo(MeasuringCondition.IDLE);
    assertThat(d.waitedMillis()).isEqualTo(4000);
  }

  @Test
  void shouldNotDecideBeforeTheStatusesOnTheTopicWereRead() throws Exception {
    IdleGate gate = new IdleGate(settings, clock::get);

    assertThat(gate.await(0).condition()).isEqualTo(MeasuringCondition.UNCHECKED);
    assertThat(gate.reading()).isNull();
  }

  @Test
  void shouldMeasureUncheckedWhenTheStatusesCannotBeRead() throws Exception {
    IdleGate gate = new IdleGate(settings, clock::get);
    gate.update(busy(clock.get()));
    gate.caughtUp();

    gate.unreadable("TopicAuthorizationException: not authorized");

    assertThat(gate.await(60_000).condition()).isEqualTo(MeasuringCondition.UNCHECKED);
    assertThat(gate.unreadableReason()).contains("not authorized");
  }

  @Test
  void shouldWaitOnceForTheWholeRequestThenMeasureTheRestAtOnce() {
    IdleGate gate = new IdleGate(new IdleSettings(true, 0, 1.0, 200, 30_000), System::currentTimeMillis);
    gate.caughtUp();
    gate.update(busy(System.currentTimeMillis()));
    List<IdleGate.Decision> decisions = new ArrayList<>();
    List<MeasuringCondition> seenByNext = new ArrayList<>();
    IdleGatedSink sink = new IdleGatedSink(gate, decisions::add);
    sink.around(new ProfileSink() {
      @Override
      public void starting(int done, int total, String label) {
        seenByNext.add(sink.current());
      }

      @Override
      public void point(TimingResult result, int done, int total) {}

      @Override
      public void grouping(GroupingResult result, int done, int total) {}
    });

    sink.starting(0, 3, "first point");
    assertThat(decisions.get(0).waitedMillis()).isGreaterThanOrEqualTo(200);
    assertThat(sink.waitLeftMillis()).isZero();
    sink.starting(1, 3, "second point: the wait is spent, so it only looks");
    gate.update(idle(System.currentTimeMillis()));
    sink.starting(2, 3, "third point");

    assertThat(seenByNext).containsExactly(MeasuringCondition.BUSY_AFTER_WAIT, MeasuringCondition.BUSY_AFTER_WAIT,
        MeasuringCondition.IDLE);
  }
  @Test
  void shouldGiveEveryStepOfStartUpProfilingTheWholeWaitButARequestOnlyWhatItsStepsLeft() {
    assertThat(IdleWait.PER_STEP.allowedMillis(30_000, 0)).isEqualTo(30_000);
    assertThat(IdleWait.PER_STEP.allowedMillis(30_000, 12_000)).isEqualTo(30_000);
    assertThat(IdleWait.PER_REQUEST.allowedMillis(30_000, 30_000)).isEqualTo(30_000);
    assertThat(IdleWait.PER_REQUEST.allowedMillis(30_000, 12_000)).isEqualTo(12_000);
    assertThat(IdleWait.PER_REQUEST.allowedMillis(30_000, 0)).isZero();
  }

  @Test
  void shouldPauseStartUpProfilingAtEveryStepWhileTheSlotsAreBusyAndGoOnWhenTheyAreIdle() {
    IdleGate gate = new IdleGate(new IdleSettings(true, 0, 1.0, 200, 30_000), System::currentTimeMillis);
    gate.caughtUp();
    gate.update(busy(System.currentTimeMillis()));
    List<IdleGate.Decision> decisions = new ArrayList<>();
    IdleGatedSink sink = new IdleGatedSink(gate, IdleWait.PER_STEP, decisions::add);
    sink.around(new ProfileSink() {
      @Override
      public void starting(int done, int total, String label) {}

      @Override
      public void point(TimingResult result, int done, int total) {}

      @Override
      public void grouping(GroupingResult result, int done, int total) {}
    });

    sink.starting(0, 4, "busy: waits the whole wait");
    sink.starting(1, 4, "still busy: waits the whole wait again, not only once");
    gate.update(idle(System.currentTimeMillis()));
    sink.starting(2, 4, "idle: at once");
    gate.update(busy(System.currentTimeMillis()));
    sink.starting(3, 4, "traffic came back: waits again");

    assertThat(decisions).extracting(IdleGate.Decision::condition).containsExactly(MeasuringCondition.BUSY_AFTER_WAIT,
        MeasuringCondition.BUSY_AFTER_WAIT, MeasuringCondition.IDLE, MeasuringCondition.BUSY_AFTER_WAIT);
    assertThat(decisions.get(0).waitedMillis()).isGreaterThanOrEqualTo(200);
    assertThat(decisions.get(1).waitedMillis()).isGreaterThanOrEqualTo(200);
    assertThat(decisions.get(2).waitedMillis()).isLessThan(200);
    assertThat(decisions.get(3).waitedMillis()).isGreaterThanOrEqualTo(200);
    assertThat(sink.waitLeftMillis()).isEqualTo(200);
  }
}
