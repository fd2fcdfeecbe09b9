package io.partita.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CpuSplitTest {
  @Test
  void shouldNameTheJvmsOwnThreadsByKind() {
    assertThat(CpuSplit.vmPartOf("C2 CompilerThre")).isEqualTo(CpuSplit.JIT);
    assertThat(CpuSplit.vmPartOf("C1 CompilerThre")).isEqualTo(CpuSplit.JIT);
    assertThat(CpuSplit.vmPartOf("GC Thread#0")).isEqualTo(CpuSplit.GC);
    assertThat(CpuSplit.vmPartOf("G1 Conc#0")).isEqualTo(CpuSplit.GC);
    assertThat(CpuSplit.vmPartOf("VM Thread")).isEqualTo(CpuSplit.GC);
    assertThat(CpuSplit.vmPartOf("partita-slot-de")).isNull(); // a slot thread, or an ONNX Runtime thread it started
    assertThat(CpuSplit.vmPartOf("VM Periodic Tas")).isNull();
  }

  /** On Linux the JIT and GC shares are measured, not left inside native, and all shares add up to the whole. */
  @Test
  void shouldSplitOffJitAndGcTimeOnLinux() {
    assumeTrue(Files.isDirectory(Path.of("/proc/self/task")), "no /proc/self/task: JIT and GC stay inside native here");
    CpuSplit cpu = new CpuSplit();
    Map<Long, Long> before = cpu.snapshot();
    assertThat(before.keySet()).as("JVM threads in the snapshot").anyMatch(k -> k < -1);
    long start = System.nanoTime();
    double sink = 0;
    Object[] garbage = new Object[1024];
    for (int round = 0; System.nanoTime() - start < 1_500_000_000L; round++) { // allocation for the GC, new code for the JIT
      garbage[round & 1023] = new double[512 + (round & 255)];
      sink += Math.sqrt(round) + ((double[]) garbage[round & 1023]).length;
    }
    System.gc();
    CpuSplit.Split split = cpu.between(before, cpu.snapshot(), (System.nanoTime() - start) / 1e9);
    assertThat(sink).isPositive();
    assertThat(split.shares()[CpuSplit.PARTS.indexOf(CpuSplit.GC)]).as("GC share").isPositive();
    assertThat(Arrays.stream(split.shares()).sum()).isCloseTo(1.0, org.assertj.core.data.Offset.offset(1e-9));
  }
}
