package io.partita.profiler.env;

import static org.assertj.core.api.Assertions.assertThat;

import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import io.partita.profiler.onnx.TinyModels;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class ProviderProbeTest {

  private static final OrtEnvironment ENV = OrtEnvironment.getEnvironment();

  @Test
  void shouldFallBackToCpuWhenCudaCannotLoad() {
    ProviderProbe.ProviderSetup cudaMissing = (provider, options) -> {
      if (provider == ProviderProbe.Provider.CUDA) {
        throw new OrtException("libcudart.so.12: cannot open shared object file");
      }
    };
    OrtInfo info = ProviderProbe.probe(ENV, cudaMissing, TinyModels.identity());
    assertThat(info.providers()).containsExactly("CPU");
    assertThat(info.failures()).containsOnlyKeys("CUDA");
    assertThat(info.failures().get("CUDA")).contains("libcudart.so.12");
  }

  @Test
  void shouldReportEveryProviderThatOpensASession() {
    ProviderProbe.ProviderSetup bothLoad = (provider, options) -> { };
    OrtInfo info = ProviderProbe.probe(ENV, bothLoad, TinyModels.identity());
    assertThat(info.providers()).containsExactly("CPU", "CUDA");
    assertThat(info.failures()).isEmpty();
  }

  @Test
  void shouldRecordAModelThatNoProviderCanOpenAsFailuresNotAnException() {
    OrtInfo info = ProviderProbe.probe(ENV, ProviderProbe.REAL, new byte[] {1, 2, 3});
    assertThat(info.providers()).isEmpty();
    assertThat(info.failures()).containsKey("CPU");
  }

  @Test
  void shouldFindCpuOnThisMachineAndCudaOnlyWhereAGpuIsPresent() {
    OrtInfo info = ProviderProbe.probe(ENV);
    assertThat(info.providers()).startsWith("CPU");
    assertThat(info.version()).isEqualTo(ENV.getVersion());
    boolean gpuDriver = Files.exists(Path.of("/dev/nvidiactl"));
    if (!gpuDriver) {
      assertThat(info.providers()).containsExactly("CPU");
      assertThat(info.failures()).containsKey("CUDA");
    }
  }
}
