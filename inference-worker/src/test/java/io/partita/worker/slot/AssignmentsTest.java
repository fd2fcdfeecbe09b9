package io.partita.worker.slot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.avro.SlotAssignment;
import io.partita.common.config.ConfigException;
import io.partita.models.demo.DemoMlp;
import io.partita.models.demo.DemoRepository;
import io.partita.models.repo.RepositoryIndex;
import io.partita.worker.WorkerFixtures;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AssignmentsTest {
  private static final Assignments.Defaults DEFAULTS = new Assignments.Defaults("host-1", 0, 32, 0, true);
  private static final List<Integer> TWO_CPUS = List.of(0, 1);

  @TempDir Path repo;
  @TempDir Path dir;
  private RepositoryIndex index;

  @BeforeEach
  void setUp() throws Exception {
    index = WorkerFixtures.demoRepository(repo);
  }

  private List<SlotSpec> resolve(List<SlotAssignment> assignments) {
    return Assignments.resolve(assignments, index, DEFAULTS, TWO_CPUS, "test");
  }

  @Test
  void shouldGiveEveryVersionOneUnpinnedSlotServingAllItsServiceModelsByDefault() {
    List<SlotSpec> specs = resolve(Assignments.fromSettings(index, DEFAULTS, List.of(), -1, TWO_CPUS));
    assertThat(specs).extracting(SlotSpec::slot).containsExactly("demo-mlp-1", "demo-mlp-2");
    SlotSpec first = specs.get(0);
    assertThat(first.session().cpus()).isEmpty();
    assertThat(first.session().threads()).isZero();
    assertThat(first.maxRows()).isEqualTo(32);
    assertThat(first.instances()).extracting(SlotSpec.Instance::serviceModel).containsExactlyElementsOf(DemoMlp.SERVICE_MODELS);
    SlotSpec.Instance a = first.instances().get(1);
    assertThat(a.file().path()).isEqualTo(DemoRepository.adapterPath("a"));
    assertThat(a.instanceId()).isEqualTo("host-1/demo-mlp-1/demo-a");
    assertThat(first.instances().get(0).file()).isNull();
  }

  @Test
  void shouldCutOnePinnedSlotPerPartitionSize() {
    List<SlotSpec> specs = resolve(Assignments.fromSettings(index, DEFAULTS, List.of(1, 1), -1, TWO_CPUS));
    assertThat(specs).extracting(SlotSpec::slot).containsExactly("demo-mlp-1-0", "demo-mlp-1-1", "demo-mlp-2-0", "demo-mlp-2-1");
    assertThat(specs).extracting(s -> s.session().cpus()).containsExactly(List.of(0), List.of(1), List.of(0), List.of(1));
    assertThat(specs).allMatch(s -> s.session().threads() == 1 && s.oneCore());

    SlotSpec two = resolve(Assignments.fromSettings(index, DEFAULTS, List.of(2), -1, TWO_CPUS)).get(0);
    assertThat(two.session().cpus()).containsExactly(0, 1);
    assertThat(two.session().threads()).isEqualTo(2);
    assertThat(two.session().intraOpAffinities()).isEqualTo("2");
  }

  @Test
  void shouldRefusePartitionsThatNeedMoreCpusThanUsable() {
    assertThatThrownBy(() -> Assignments.fromSettings(index, DEFAULTS, List.of(2, 2), -1, TWO_CPUS))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("worker.partitions=2,2")
        .hasMessageContaining("at most 2");
  }

  @Test
  void shouldPutTheDefaultSlotsOnTheGpuWhenAsked() {
    SlotSpec gpu = resolve(Assignments.fromSettings(index, DEFAULTS, List.of(), 0, TWO_CPUS)).get(0);
    assertThat(gpu.pool()).isEqualTo("gpu");
    assertThat(gpu.session().cuda()).isTrue();
    assertThat(gpu.session().gpu()).isZero();
  }

  @Test
  void shouldReadAStaticListWithDefaultsAndSkipOtherHosts() throws Exception {
    Path file = dir.resolve("slots.json");
    Files.writeString(file, """
        [
          {"slot": "s0", "model": "demo-mlp", "version": "1", "cpus": [1], "serviceModels": ["demo", "demo-a"]},
          {"host": "other-host", "slot": "s0", "model": "demo-mlp", "version": "2"},
          {"host": "host-1", "slot": "s1", "model": "demo-mlp", "version": 2, "cpus": "0-1", "maxBatch": 8,
           "memoryBudgetBytes": 4096,
           "serviceModels": [{"serviceModel": "demo-b", "instanceId": "b#7"},
                             {"serviceModel": "demo-c", "weightFile": null}]}
        ]
        """);
    List<SlotAssignment> read = Assignments.read(file, index, "host-1");
    assertThat(read).extracting(SlotAssignment::getSlot).containsExactly("s0", "s1");
    List<SlotSpec> specs = resolve(read);

    SlotSpec s0 = specs.get(0);
    assertThat(s0.session().cpus()).containsExactly(1);
    assertThat(s0.instances()).extracting(SlotSpec.Instance::serviceModel).containsExactly("demo", "demo-a");
    assertThat(s0.instances().get(1).file().path()).isEqualTo(DemoRepository.adapterPath("a"));

    SlotSpec s1 = specs.get(1);
    assertThat(s1.version().version()).isEqualTo("2");
    assertThat(s1.session().cpus()).containsExactly(0, 1);
    assertThat(s1.maxRows()).isEqualTo(8);
    assertThat(s1.budgetBytes()).isEqualTo(4096);
    assertThat(s1.instances().get(0).instanceId()).isEqualTo("b#7");
    assertThat(s1.instances().get(0).file().path()).isEqualTo(DemoRepository.adapterPath("b"));
    assertThat(s1.instances().get(1).file()).as("an explicit null means no weight file").isNull();
  }

  @Test
  void shouldReadYamlToo() throws Exception {
    Path file = dir.resolve("slots.yaml");
    Files.writeString(file, """
        - slot: gpu0
          model: demo-mlp
          version: "1"
          gpu: 0
        """);
    SlotSpec spec = resolve(Assignments.read(file, index, "host-1")).get(0);
    assertThat(spec.pool()).isEqualTo("gpu");
    assertThat(spec.session().cuda()).isTrue();
    assertThat(spec.instances()).hasSize(4);
  }

  @Test
  void shouldNameTheEntryAndFieldAtFault() throws Exception {
    assertThatThrownBy(() -> resolve(List.of(assignment("s", "9", List.of(), 0))))
        .isInstanceOf(ConfigException.class).hasMessageContaining("test [0].version").hasMessageContaining("versions: [1, 2]");
    assertThatThrownBy(() -> resolve(List.of(assignment("s", "1", List.of(0), 2))))
        .hasMessageContaining("[0].threads").hasMessageContaining("never more busy threads than cores");
    assertThatThrownBy(() -> resolve(List.of(assignment("s", "1", List.of(7), 0))))
        .hasMessageContaining("[0].cpus").hasMessageContaining("CPU 7 is not usable");
    assertThatThrownBy(() -> resolve(List.of(assignment("s", "1", List.of(), 0), assignment("s", "2", List.of(), 0))))
        .hasMessageContaining("[1].slot").hasMessageContaining("assigned twice");
    assertThatThrownBy(() -> resolve(List.of(SlotAssignment.newBuilder(assignment("s", "1", List.of(), 0)).setProvider("CUDA").build())))
        .hasMessageContaining("[0].provider");

    Path typo = dir.resolve("typo.json");
    Files.writeString(typo, "[{\"slot\": \"s\", \"model\": \"demo-mlp\", \"version\": \"1\", \"cpu\": [0]}]");
    assertThatThrownBy(() -> Assignments.read(typo, index, "host-1"))
        .isInstanceOf(ConfigException.class).hasMessageContaining("[0].cpu: unknown field");
  }

  private static SlotAssignment assignment(String slot, String version, List<Integer> cpus, int threads) {
    return SlotAssignment.newBuilder().setHost("host-1").setSlot(slot).setModel(DemoMlp.MODEL_NAME).setVersion(version)
        .setPool("cpu").setCpus(cpus).setThreads(threads).build();
  }
}
