package io.partita.worker.serving;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.avro.ErrorCode;
import io.partita.models.demo.DemoMlp;
import io.partita.models.demo.DemoRepository;
import io.partita.models.lora.LoraAdapter;
import io.partita.models.lora.LoraAdapterWriter;
import io.partita.models.lora.LoraTensor;
import io.partita.models.repo.ModelSignature;
import io.partita.models.repo.RepositoryIndex;
import io.partita.models.repo.Sha256;
import io.partita.worker.WorkerFixtures;
import io.partita.worker.serving.WeightFileMounts.Mount;
import io.partita.worker.serving.WeightFileMounts.State;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The loading interface over the demo repository's real adapters and ONNX Runtime. */
class WeightFileMountsTest {
  @TempDir Path repo;
  @TempDir Path outside;
  private ModelSignature signature;
  private final AtomicInteger changes = new AtomicInteger();

  @BeforeEach
  void setUp() throws Exception {
    RepositoryIndex index = WorkerFixtures.demoRepository(repo);
    signature = index.models().get(DemoMlp.MODEL_NAME).signature();
  }

  private WeightFileMounts mounts(long budget) {
    return new WeightFileMounts(repo, signature, budget, System::currentTimeMillis, changes::incrementAndGet);
  }

  private WeightFileRef adapter(String id) throws Exception {
    String path = DemoRepository.adapterPath(id);
    return new WeightFileRef(path, Sha256.of(repo.resolve(path)));
  }

  private long size(String id) throws Exception {
    return Files.size(repo.resolve(DemoRepository.adapterPath(id)));
  }

  @Test
  void shouldMountAnAdapterAndHandItOutForARun() throws Exception {
    try (WeightFileMounts mounts = mounts(0)) {
      Mount m = mounts.mount("demo-a", "i-a", adapter("a"));
      assertThat(m.state()).isEqualTo(State.READY);
      assertThat(m.bytes()).isEqualTo(size("a"));
      mounts.mount("demo", "i-base", null);
      try (WeightFileMounts.Lease lease = mounts.acquire("demo-a"); WeightFileMounts.Lease base = mounts.acquire("demo")) {
        assertThat(lease.adapter()).isNotNull();
        assertThat(base.adapter()).isNull();
        assertThat(mounts.mount("demo-a").orElseThrow().inUse()).isEqualTo(1);
      }
      assertThat(mounts.mount("demo-a").orElseThrow().inUse()).isZero();
      assertThat(changes.get()).isPositive();
    }
  }

  @Test
  void shouldHoldParametersInsteadOfOrtAdaptersForAPerRowSessionAndCountTheirBytes() throws Exception {
    long budget = size("a") + size("b");
    try (WeightFileMounts mounts = new WeightFileMounts(repo, signature, budget, true, System::currentTimeMillis, changes::incrementAndGet)) {
      mounts.mount("demo-a", "i-a", adapter("a"));
      mounts.mount("demo-b", "i-b", adapter("b"));
      mounts.mount("demo", "i-base", null);
      try (WeightFileMounts.Lease a = mounts.acquire("demo-a"); WeightFileMounts.Lease base = mounts.acquire("demo")) {
        assertThat(a.adapter()).isNull();
        assertThat(a.parameters()).isEqualTo(DemoMlp.adapter("a"));
        assertThat(base.parameters()).isNull();
      }
      assertThat(mounts.mountedBytes()).isEqualTo(budget);
      mounts.mount("demo-c", "i-c", adapter("c")); // over the budget: the least recently used (b) goes
      assertThat(mounts.mount("demo-b").orElseThrow().state()).isEqualTo(State.EVICTED);
      assertThat(mounts.mountedBytes()).isEqualTo(size("a") + size("c"));
      try (WeightFileMounts.Lease b = mounts.acquire("demo-b")) {
        assertThat(b.parameters()).isEqualTo(DemoMlp.adapter("b"));
      }
    }
  }

  @Test
  void shouldRefuseAWrongSha256AndKeepServingTheOthers() throws Exception {
    try (WeightFileMounts mounts = mounts(0)) {
      mounts.mount("demo-a", "i-a", adapter("a"));
      Mount bad = mounts.mount("demo-b", "i-b", new WeightFileRef(DemoRepository.adapterPath("b"), "0".repeat(64)));
      assertThat(bad.state()).isEqualTo(State.NOT_READY);
      assertThat(bad.reason()).contains("sha256").contains("0".repeat(64));
      assertThatThrownBy(() -> mounts.acquire("demo-b"))
          .isInstanceOfSatisfying(NotRunnableException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_READY))
          .hasMessageContaining("sha256");
      try (WeightFileMounts.Lease lease = mounts.acquire("demo-a")) {
        assertThat(lease.adapter()).isNotNull();
      }
    }
  }

  @Test
  void shouldRefuseAParentSegment() throws Exception {
    // refused for the segment itself, even though it normalizes back to a real adapter inside the root
    String path = "demo-mlp/../" + DemoRepository.adapterPath("a");
    assertRefused(new WeightFileRef(path, adapter("a").sha256()), "'..'");
  }

  @Test
  void shouldRefuseAnAbsolutePath() throws Exception {
    Path abs = repo.resolve(DemoRepository.adapterPath("a")).toAbsolutePath();
    assertRefused(new WeightFileRef(abs.toString(), adapter("a").sha256()), "absolute");
  }

  @Test
  void shouldRefuseALinkOutOfTheRepository() throws Exception {
    Path target = outside.resolve("a.onnx_adapter");
    Files.copy(repo.resolve(DemoRepository.adapterPath("a")), target);
    Files.createSymbolicLink(repo.resolve("demo-mlp/adapters/link.onnx_adapter"), target);
    assertRefused(new WeightFileRef("demo-mlp/adapters/link.onnx_adapter", Sha256.of(target)), "symbolic link");
  }

  @Test
  void shouldRefuseALinkedDirectoryOutOfTheRepository() throws Exception {
    Files.copy(repo.resolve(DemoRepository.adapterPath("a")), outside.resolve("a.onnx_adapter"));
    Files.createSymbolicLink(repo.resolve("elsewhere"), outside);
    assertRefused(new WeightFileRef("elsewhere/a.onnx_adapter", adapter("a").sha256()), "symbolic link");
  }

  @Test
  void shouldRefuseAnAdapterThatDoesNotFitTheModel() throws Exception {
    Path wrong = repo.resolve("demo-mlp/adapters/wrong.onnx_adapter");
    LoraAdapterWriter.write(LoraAdapter.of(Map.of("fc9.lora_A", new LoraTensor(new float[16], 8, 2))), wrong);
    assertRefused(new WeightFileRef("demo-mlp/adapters/wrong.onnx_adapter", Sha256.of(wrong)), "fc9.lora_A");
  }

  private void assertRefused(WeightFileRef file, String why) throws Exception {
    try (WeightFileMounts mounts = mounts(0)) {
      mounts.mount("demo", "i-base", null);
      Mount m = mounts.mount("demo-x", "i-x", file);
      assertThat(m.state()).isEqualTo(State.NOT_READY);
      assertThat(m.reason()).contains(why);
      assertThat(m.bytes()).isZero();
      assertThat(mounts.mountedBytes()).isZero();
      try (WeightFileMounts.Lease lease = mounts.acquire("demo")) {
        assertThat(lease.adapter()).isNull(); // the slot keeps serving the others
      }
    }
  }

  @Test
  void shouldUnmountTheLeastRecentlyUsedWhenTheBudgetIsFull() throws Exception {
    long budget = size("a") + size("b");
    try (WeightFileMounts mounts = mounts(budget)) {
      mounts.mount("demo-a", "i-a", adapter("a"));
      mounts.mount("demo-b", "i-b", adapter("b"));
      mounts.acquire("demo-a").close(); // a is now more recently used than b
      mounts.mount("demo-c", "i-c", adapter("c"));
      assertThat(mounts.mount("demo-b").orElseThrow().state()).isEqualTo(State.EVICTED);
      assertThat(mounts.mount("demo-a").orElseThrow().state()).isEqualTo(State.READY);
      assertThat(mounts.mount("demo-c").orElseThrow().state()).isEqualTo(State.READY);
      assertThat(mounts.mountedBytes()).isLessThanOrEqualTo(budget);
      assertThat(mounts.evictions()).isEqualTo(1);

      // An evicted weight file comes back (checked again) for the next request that needs it.
      try (WeightFileMounts.Lease lease = mounts.acquire("demo-b")) {
        assertThat(lease.adapter()).isNotNull();
      }
      assertThat(mounts.mount("demo-a").orElseThrow().state()).isEqualTo(State.EVICTED);
      assertThat(mounts.mountedBytes()).isLessThanOrEqualTo(budget);
    }
  }

  @Test
  void shouldNeverUnmountAWeightFileInUse() throws Exception {
    long budget = size("a") + size("b");
    try (WeightFileMounts mounts = mounts(budget)) {
      mounts.mount("demo-a", "i-a", adapter("a"));
      mounts.mount("demo-b", "i-b", adapter("b"));
      try (WeightFileMounts.Lease a = mounts.acquire("demo-a")) {
        // a was used less recently than b, but it is in use: b goes instead
        mounts.acquire("demo-b").close();
        mounts.mount("demo-c", "i-c", adapter("c"));
        assertThat(mounts.mount("demo-a").orElseThrow().state()).isEqualTo(State.READY);
        assertThat(mounts.mount("demo-b").orElseThrow().state()).isEqualTo(State.EVICTED);

        try (WeightFileMounts.Lease c = mounts.acquire("demo-c")) {
          // both mounted files are in use: b cannot come back now
          assertThatThrownBy(() -> mounts.acquire("demo-b"))
              .isInstanceOfSatisfying(NotRunnableException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.OVERLOADED));
          assertThat(mounts.mount("demo-b").orElseThrow().state()).isEqualTo(State.EVICTED);
          assertThat(a.adapter()).isNotNull();
          assertThat(c.adapter()).isNotNull();
        }
      }
      try (WeightFileMounts.Lease b = mounts.acquire("demo-b")) {
        assertThat(b.adapter()).isNotNull();
      }
    }
  }

  @Test
  void shouldKeepAnUnmountedWeightFileLoadedUntilItsRunEnds() throws Exception {
    try (WeightFileMounts mounts = mounts(0)) {
      mounts.mount("demo-a", "i-a", adapter("a"));
      WeightFileMounts.Lease lease = mounts.acquire("demo-a");
      assertThat(mounts.unmount("demo-a")).isTrue();
      assertThat(mounts.mount("demo-a")).isEmpty();
      assertThat(mounts.mountedBytes()).as("still held by the run").isEqualTo(size("a"));
      lease.close();
      assertThat(mounts.mountedBytes()).isZero();
      assertThatThrownBy(() -> mounts.acquire("demo-a")).hasMessageContaining("not mounted");
    }
  }

  @Test
  void shouldRefuseAWeightFileLargerThanTheWholeBudget() throws Exception {
    try (WeightFileMounts mounts = mounts(size("a") - 1)) {
      Mount m = mounts.mount("demo-a", "i-a", adapter("a"));
      assertThat(m.state()).isEqualTo(State.NOT_READY);
      assertThat(m.reason()).contains("memory budget");
    }
  }
}
