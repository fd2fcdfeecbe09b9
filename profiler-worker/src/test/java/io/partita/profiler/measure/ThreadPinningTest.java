package io.partita.profiler.measure;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.profiler.env.CommandRunner;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class ThreadPinningTest {

  @Test
  void shouldRestrictOnlyTheCallingThreadToTheGivenCpu() throws Exception {
    List<Integer> before = ThreadPinning.currentThreadCpus();
    int target = before.get(before.size() - 1);
    AtomicReference<Boolean> pinned = new AtomicReference<>();
    AtomicReference<List<Integer>> seen = new AtomicReference<>();
    Thread t = new Thread(() -> {
      pinned.set(ThreadPinning.pinCurrentThread(List.of(target), CommandRunner.processes()));
      try {
        seen.set(ThreadPinning.currentThreadCpus());
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    t.start();
    t.join();
    if (Files.isExecutable(Path.of("/usr/bin/taskset"))) {
      assertThat(pinned.get()).isTrue();
      assertThat(seen.get()).containsExactly(target);
    } else {
      assertThat(pinned.get()).isFalse();
    }
    assertThat(ThreadPinning.currentThreadCpus()).isEqualTo(before);
  }

  @Test
  void shouldReportFailureWhenTasksetIsMissing() {
    CommandRunner missing = (command, timeout) -> java.util.Optional.empty();
    assertThat(ThreadPinning.pinCurrentThread(List.of(0), missing)).isFalse();
    assertThat(ThreadPinning.pinCurrentThread(List.of(), CommandRunner.processes())).isFalse();
  }
}
