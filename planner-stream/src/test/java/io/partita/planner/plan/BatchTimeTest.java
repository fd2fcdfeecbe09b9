package io.partita.planner.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.partita.avro.HostEnvironment;
import io.partita.avro.TimingEvent;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The time a batch takes on a host under a CPU quota, where the median alone hides the quota. */
class BatchTimeTest {
  private static HostEnvironment host(Double quotaCores, int usable) {
    return HostEnvironment.newBuilder().setHostId("h").setCpuModel("cpu").setCpuFlags(List.of()).setLogicalCores(2)
        .setPhysicalCores(2).setUsableCores(usable).setUsableCpuIds(List.of()).setCpuQuotaCores(quotaCores)
        .setMemoryBytes(1L << 30).setMemoryLimitBytes(null).setGpus(List.of()).setOnnxRuntimeVersion("1")
        .setExecutionProviders(List.of("CPU")).setOsName("Linux").setOsVersion("6").setOsArch("amd64")
        .setJavaVersion("17").setBaseline(null).setTimestamp(0).build();
  }

  private static TimingEvent timing(double p50Ms, double throughput) {
    return TimingEvent.newBuilder().setModel("m").setVersion("1").setHost("h").setPool("cpu").setSize(1).setBatch(1)
        .setProvider("CPU").setGrouping(List.of()).setP50Ms(p50Ms).setP90Ms(p50Ms).setP99Ms(p50Ms).setMeanMs(p50Ms)
        .setSamples(100).setThroughput(throughput).setMemoryBytes(0).setStable(true).setPinned(true).setOk(true)
        .setError(null).setRequestId(null).setTimestamp(0).build();
  }

  @Test
  void shouldKeepTheMedianWithoutAQuota() {
    assertThat(Plans.batchTimeMs(timing(2.0, 300), host(null, 1))).isEqualTo(2.0);
    assertThat(Plans.batchTimeMs(timing(2.0, 300), host(4.0, 2))).isEqualTo(2.0); // a quota above the cores binds nothing
    assertThat(Plans.batchTimeMs(timing(2.0, 300), null)).isEqualTo(2.0);
  }

  @Test
  void shouldStretchAShortRunByTheQuotaShareItsMedianHides() {
    // 15 us runs fit a 0.2-core slice: the median is full speed, the sustained rate a fifth of it
    assertThat(Plans.batchTimeMs(timing(0.015, 1000 / 0.076), host(0.2, 1))).isCloseTo(0.075, within(1e-9));
  }

  @Test
  void shouldNotCountTheThrottleTwiceWhenEveryRunWasThrottled() {
    // 2.6 ms of work against a 2 ms slice per 10 ms: the median (11.5 ms) already carries the pauses
    assertThat(Plans.batchTimeMs(timing(11.5, 1000 / 13.0), host(0.2, 1))).isCloseTo(13.0, within(1e-9));
    // without a throughput figure, the stretched median
    assertThat(Plans.batchTimeMs(timing(1.0, 0), host(0.5, 1))).isEqualTo(2.0);
  }
}
