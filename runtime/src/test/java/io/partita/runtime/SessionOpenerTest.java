package io.partita.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtProvider;
import io.partita.models.demo.DemoMlp;
import io.partita.models.repo.ModelSignature;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SessionOpenerTest {

  private static final OrtEnvironment ENV = OrtEnvironment.getEnvironment();

  /** CUDA opens only with the GPU build on a host with a GPU; elsewhere the fallback is tested. */
  private static boolean cudaMayLoad() {
    return OrtEnvironment.getAvailableProviders().contains(OrtProvider.CUDA)
        && Files.exists(Path.of("/dev/nvidiactl"));
  }

  @Test
  void shouldOpenAModelFileOnCpuWithTheSlotsSettings(@TempDir Path dir) throws Exception {
    Path file = Files.write(dir.resolve("model.onnx"), DemoMlp.modelBytes(DemoMlp.VERSION_FP32));
    SlotConfig slot = SlotConfig.pinned(List.of(Pinning.usableCpus().get(0)), true);
    SessionOpener.Opened opened = new SessionOpener(ENV, SessionOpener.CudaFallback.TO_CPU).open(file, slot);
    try (var session = opened.session()) {
      assertThat(opened.provider()).isEqualTo(Provider.CPU);
      assertThat(opened.fallback()).isNull();
      assertThat(opened.settings()).isEqualTo(SessionSettings.of(slot));
      assertThat(OrtTypes.signature(session).inputs()).isEqualTo(ModelSignature.read(file).inputs());
    }
  }

  @Test
  void shouldFallBackToCpuAndSayWhyWhenCudaDoesNotLoad() throws Exception {
    if (cudaMayLoad()) {
      return; // covered by the device check on a GPU host
    }
    SessionOpener opener = new SessionOpener(ENV, SessionOpener.CudaFallback.TO_CPU);
    for (int i = 0; i < 2; i++) { // the second time without trying CUDA again
      SessionOpener.Opened opened = opener.open(DemoMlp.modelBytes(DemoMlp.VERSION_FP32), SlotConfig.cuda(0));
      try (var session = opened.session()) {
        assertThat(opened.provider()).isEqualTo(Provider.CPU);
        assertThat(opened.fallback()).startsWith("CUDA device 0 did not load (").endsWith("); running on CPU");
        assertThat(opened.settings()).isEqualTo(SessionSettings.of(SlotConfig.cuda(0).onCpu()));
      }
    }
  }

  @Test
  void shouldFailWithoutFallbackWhenCudaDoesNotLoad() {
    if (cudaMayLoad()) {
      return;
    }
    SessionOpener strict = new SessionOpener(ENV, SessionOpener.CudaFallback.NONE);
    assertThatThrownBy(() -> strict.open(DemoMlp.modelBytes(DemoMlp.VERSION_FP32), SlotConfig.cuda(0)))
        .isInstanceOfAny(OrtException.class, RuntimeException.class, UnsatisfiedLinkError.class);
  }

  @Test
  void shouldRefuseBytesThatAreNotAModel() {
    SessionOpener opener = new SessionOpener(ENV, SessionOpener.CudaFallback.TO_CPU);
    assertThatThrownBy(() -> opener.open(new byte[] {1, 2, 3}, SlotConfig.unpinned(1)))
        .isInstanceOf(OrtException.class);
  }
}
