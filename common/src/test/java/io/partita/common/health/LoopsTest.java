package io.partita.common.health;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class LoopsTest {
  @Test
  void shouldBeNotReadyUntilEveryLoopSaysReady() {
    Loops loops = new Loops();
    Loop a = loops.register("a");
    Loop b = loops.register("b");
    assertThat(loops.notReady()).contains("loop 'a' is starting");
    a.ready();
    assertThat(loops.notReady()).contains("loop 'b' is starting");
    b.ready();
    assertThat(loops.allReady()).isTrue();
  }

  @Test
  void shouldNameTheDeadLoopAndItsCause() {
    Loops loops = new Loops();
    Loop a = loops.register("worker-requests");
    a.ready();
    a.died(new IllegalStateException("broker gone"));
    assertThat(loops.notReady()).contains("loop 'worker-requests' died: IllegalStateException: broker gone");
    a.notReady("behind");
    assertThat(a.snapshot().state()).isEqualTo(Loop.State.DEAD);
  }

  @Test
  void shouldCountAStoppedLoopAsNotReadyAndAllowRemoval() {
    Loops loops = new Loops();
    Loop a = loops.register("slot-1");
    a.ready();
    a.stopped();
    assertThat(loops.allReady()).isFalse();
    loops.remove(a);
    assertThat(loops.allReady()).isTrue();
  }

  @Test
  void shouldHaltOnVirtualMachineErrorsOnly() {
    AtomicInteger status = new AtomicInteger(-1);
    Fatal.Halter previous = Fatal.setHalterForTests(status::set);
    try {
      Fatal.haltIfFatal("test", new IllegalArgumentException("one bad record"));
      assertThat(status.get()).isEqualTo(-1);
      Fatal.haltIfFatal("test", new OutOfMemoryError("Java heap space"));
      assertThat(status.get()).isEqualTo(Fatal.EXIT_STATUS);
    } finally {
      Fatal.setHalterForTests(previous);
    }
  }
}
