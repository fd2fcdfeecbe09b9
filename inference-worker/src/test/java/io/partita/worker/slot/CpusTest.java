package io.partita.worker.slot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class CpusTest {

  @Test
  void shouldParseKernelCpuLists() {
    assertThat(Cpus.parseList("0-3,8,10-11")).containsExactly(0, 1, 2, 3, 8, 10, 11);
    assertThat(Cpus.parseList(" 2,1,2 ")).containsExactly(1, 2);
    assertThat(Cpus.parseList("")).isEmpty();
    assertThatThrownBy(() -> Cpus.parseList("3-1")).hasMessageContaining("descending");
    assertThatThrownBy(() -> Cpus.parseList("a")).hasMessageContaining("bad entry 'a'");
  }

  @Test
  void shouldFindTheUsableCpus() {
    assertThat(Cpus.usable()).isNotEmpty().doesNotHaveDuplicates();
  }

  @Test
  void shouldPinOnlyTheCallingThread() throws Exception {
    List<Integer> usable = Cpus.usable();
    List<Integer> before = Cpus.currentThread();
    AtomicReference<List<Integer>> seen = new AtomicReference<>();
    AtomicReference<Boolean> pinned = new AtomicReference<>();
    Thread t = new Thread(() -> {
      pinned.set(Cpus.pinCurrentThread(List.of(usable.get(0))));
      try {
        seen.set(Cpus.currentThread());
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    });
    t.start();
    t.join();
    if (pinned.get()) {
      assertThat(seen.get()).containsExactly(usable.get(0));
    } else {
      assertThat(seen.get()).isEqualTo(before); // no taskset here: nothing changed, and the slot says "not pinned"
    }
    assertThat(Cpus.currentThread()).isEqualTo(before);
    assertThat(Cpus.pinCurrentThread(List.of())).isFalse();
  }
}
