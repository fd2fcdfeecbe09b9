package io.partita.rules;

import static org.assertj.core.api.Assertions.assertThat;

import ai.onnxruntime.OrtEnvironment;
import io.partita.common.config.Settings;
import io.partita.models.demo.DemoRepository;
import io.partita.models.repo.ModelRepository;
import io.partita.models.repo.RepositoryIndex;
import io.partita.profiler.ProfilerConfig;
import io.partita.profiler.env.CommandRunner;
import io.partita.profiler.env.ProbedHost;
import io.partita.profiler.env.HostProbe;
import io.partita.profiler.env.ProviderProbe;
import io.partita.profiler.measure.Measurer;
import io.partita.profiler.stats.Sampler;
import io.partita.runtime.Pinning;
import io.partita.runtime.SessionSettings;
import io.partita.runtime.SlotConfig;
import io.partita.worker.WorkerConfig;
import io.partita.worker.slot.Assignments;
import io.partita.worker.slot.SlotSpec;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The premise of the plan: a profile is measured with exactly the session configuration and the
 * pinning the worker later serves that partition with. For the same partitions of the same host,
 * the profiler's measured slots (its {@code Measurer} layout, built from its own settings) and the
 * worker's served slots (its assignments, resolved from its own settings) must be equal records,
 * give equal ONNX Runtime session settings, and be pinned by the same taskset steps.
 */
class MeasuredIsServedTest {

  @TempDir static Path repo;
  private static RepositoryIndex index;
  private static ProbedHost host;

  @BeforeAll
  static void demoRepositoryAndHost() throws Exception {
    DemoRepository.writeTo(repo);
    index = ModelRepository.scan(repo);
    HostProbe probe = HostProbe.live();
    host = probe.probe(probe.hostname(), ProviderProbe.probe(OrtEnvironment.getEnvironment()));
  }

  @Test
  void shouldCutPartitionsFromTheSameCpusInTheProfilerAndTheWorker() {
    // The profiler may use fewer CPUs than the affinity mask allows (a cgroup quota), never others.
    assertThat(Pinning.usableCpus()).startsWith(host.usableCpuIds().toArray(Integer[]::new));
  }

  @Test
  void shouldMeasureEachPartitionWithTheConfigurationAndPinningTheWorkerServesItWith() throws Exception {
    assertMeasuredIsServed(Map.of());
  }

  @Test
  void shouldTurnSpinningOffOnBothSidesWithTheMatchingSetting() throws Exception {
    List<SlotConfig> served = assertMeasuredIsServed(Map.of("profiler.spin", "false", "worker.spin", "false"));
    assertThat(served).allSatisfy(s -> assertThat(s.spinning()).isFalse());
  }

  @Test
  void shouldServeACudaSlotAsTheProfilerMeasuresOne() {
    WorkerConfig worker = WorkerConfig.from(settings(Map.of()));
    List<SlotSpec> gpu = Assignments.resolve(
        Assignments.fromSettings(index, defaults(worker), List.of(), 0, Pinning.usableCpus()),
        index, defaults(worker), Pinning.usableCpus(), "test");
    // Measurer.layout(CUDA, [1]) lays out SlotConfig.cuda(0); it needs a GPU here, the record does not.
    assertThat(gpu).extracting(SlotSpec::session).containsOnly(SlotConfig.cuda(0));
  }

  /** Every partition size the host allows, alone and side by side; returns the served slots. */
  private static List<SlotConfig> assertMeasuredIsServed(Map<String, String> overrides) throws Exception {
    ProfilerConfig profiler = ProfilerConfig.from(settings(overrides));
    WorkerConfig worker = WorkerConfig.from(settings(overrides));
    // What ProfilerService builds its Measurer with: the spinning setting comes from profiler.spin.
    Measurer measurer = new Measurer(OrtEnvironment.getEnvironment(), host, new Measurer.Settings(
        Sampler.Settings.ofBudgetMillis(1), Map.of(), CommandRunner.processes(), false, profiler.measuring().spinning()));
    int cores = host.usableCores();
    List<List<Integer>> groupings = new ArrayList<>();
    for (int k = 1; k <= cores; k++) {
      groupings.add(List.of(k));
    }
    if (cores >= 2) {
      groupings.add(List.of(1, 1));
    }
    List<SlotConfig> all = new ArrayList<>();
    for (List<Integer> sizes : groupings) {
      List<SlotConfig> measured = measurer.layout(ProviderProbe.Provider.CPU, sizes).stream()
          .flatMap(List::stream).toList();
      // The worker cuts the same partitions for each model version; take the first version's slots.
      List<SlotSpec> specs = Assignments.resolve(
          Assignments.fromSettings(index, defaults(worker), sizes, -1, Pinning.usableCpus()),
          index, defaults(worker), Pinning.usableCpus(), "test");
      String firstVersion = specs.get(0).model() + "/" + specs.get(0).version().version();
      List<SlotConfig> served = specs.stream()
          .filter(s -> (s.model() + "/" + s.version().version()).equals(firstVersion))
          .map(SlotSpec::session).toList();

      assertThat(served).as("partitions %s", sizes).isEqualTo(measured);
      for (int i = 0; i < measured.size(); i++) {
        assertThat(SessionSettings.of(served.get(i))).isEqualTo(SessionSettings.of(measured.get(i)));
        assertThat(pinningSteps(served.get(i))).isEqualTo(pinningSteps(measured.get(i))).isNotEmpty();
      }
      all.addAll(served);
    }
    return all;
  }

  /** The taskset commands that open a session for the slot, recorded instead of run. */
  private static List<List<String>> pinningSteps(SlotConfig slot) throws Exception {
    List<List<String>> steps = new ArrayList<>();
    Pinning.openPinned(slot, (argv, timeout) -> steps.add(argv.subList(0, 4)), () -> null);
    return steps;
  }

  private static Assignments.Defaults defaults(WorkerConfig worker) {
    return new Assignments.Defaults(worker.hostId(), worker.intraOpThreads(), worker.batching().maxBatch(),
        worker.slots().weightBudgetBytes(), worker.slots().spin());
  }

  private static Settings settings(Map<String, String> overrides) {
    Map<String, String> values = new HashMap<>(Map.of(
        "kafka.bootstrap.servers", "localhost:9092", "model.repo", repo.toString(), "host.id", "host-1"));
    values.putAll(overrides);
    return Settings.of(values);
  }
}
