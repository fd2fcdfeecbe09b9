package io.partita.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class PinningTest {

  private static final boolean TASKSET = Files.isExecutable(Path.of("/usr/bin/taskset"));

  @Test
  void shouldFindTheUsableCpus() {
    assertThat(Pinning.usableCpus()).isNotEmpty().doesNotHaveDuplicates().isSorted();
  }

  @Test
  void shouldRestrictOnlyTheCallingThreadToTheGivenCpu() throws Exception {
    List<Integer> before = Pinning.currentThreadCpus();
    int target = before.get(before.size() - 1);
    AtomicReference<Boolean> pinned = new AtomicReference<>();
    AtomicReference<List<Integer>> seen = new AtomicReference<>();
    Thread t = new Thread(() -> {
      pinned.set(Pinning.pinCurrentThread(List.of(target)));
      try {
        seen.set(Pinning.currentThreadCpus());
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    t.start();
    t.join();
    if (TASKSET) {
      assertThat(pinned.get()).isTrue();
      assertThat(seen.get()).containsExactly(target);
    } else {
      assertThat(pinned.get()).isFalse();
    }
    assertThat(Pinning.currentThreadCpus()).isEqualTo(before);
  }

  @Test
  void shouldOpenOnTheWholePartitionThenKeepTheCallerOnItsFirstCpu() throws Exception {
    List<Integer> usable = Pinning.usableCpus();
    List<Integer> partition = usable.size() >= 2 ? usable.subList(usable.size() - 2, usable.size()) : usable;
    SlotConfig slot = SlotConfig.pinned(partition, true);
    AtomicReference<List<Integer>> whileOpening = new AtomicReference<>();
    AtomicReference<Pinning.Pinned<String>> result = new AtomicReference<>();
    AtomicReference<List<Integer>> after = new AtomicReference<>();
    Thread t = new Thread(() -> {
      try {
        result.set(Pinning.openPinned(slot, () -> {
          whileOpening.set(Pinning.currentThreadCpus());
          return "session";
        }));
        after.set(Pinning.currentThreadCpus());
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    t.start();
    t.join();
    assertThat(result.get().value()).isEqualTo("session");
    if (TASKSET) {
      assertThat(result.get().pinned()).isTrue();
      assertThat(whileOpening.get()).containsExactlyElementsOf(partition);
      assertThat(after.get()).containsExactly(partition.get(0));
    } else {
      assertThat(result.get().pinned()).isFalse();
    }
  }

  @Test
  void shouldRunTheSameTasksetStepsForEveryPinnedSlot() throws Exception {
    List<List<String>> commands = new ArrayList<>();
    Pinning.Command record = (argv, timeout) -> commands.add(argv.subList(0, 4));
    Pinning.Pinned<Integer> p = Pinning.openPinned(SlotConfig.pinned(List.of(4, 5, 6), true), record, () -> 1);
    assertThat(p.pinned()).isTrue();
    assertThat(commands).containsExactly(
        List.of("taskset", "-p", "-c", "4,5,6"),
        List.of("taskset", "-p", "-c", "4"));
  }

  @Test
  void shouldReportFailureWhenTasksetIsMissingAndPinNothingWhenUnpinned() throws Exception {
    Pinning.Command missing = (argv, timeout) -> false;
    assertThat(Pinning.pinCurrentThread(List.of(0), missing)).isFalse();
    assertThat(Pinning.pinCurrentThread(List.of())).isFalse();
    List<List<String>> commands = new ArrayList<>();
    Pinning.Pinned<Integer> unpinned = Pinning.openPinned(SlotConfig.unpinned(2),
        (argv, timeout) -> commands.add(argv), () -> 7);
    assertThat(unpinned.value()).isEqualTo(7);
    assertThat(unpinned.pinned()).isFalse();
    assertThat(commands).isEmpty();
    assertThat(Pinning.openPinned(SlotConfig.pinned(List.of(0, 1), true), missing, () -> 1).pinned()).isFalse();
  }
}
