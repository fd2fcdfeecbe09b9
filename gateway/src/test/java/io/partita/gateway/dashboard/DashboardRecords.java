package io.partita.gateway.dashboard;

import io.partita.avro.AssignedServiceModel;
import io.partita.avro.AssignedWeightFile;
import io.partita.avro.BaselineScore;
import io.partita.avro.DeadLetter;
import io.partita.avro.Demand;
import io.partita.avro.HostEnvironment;
import io.partita.avro.HostLiveness;
import io.partita.avro.JobStatus;
import io.partita.avro.PartitionPlan;
import io.partita.avro.Route;
import io.partita.avro.RouteInstance;
import io.partita.avro.ServiceModel;
import io.partita.avro.SlotAssignment;
import io.partita.avro.TimingEvent;
import io.partita.avro.VersionCandidate;
import io.partita.avro.VersionChoice;
import io.partita.common.serde.Codecs;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;

/** The records the dashboard tests write, as the profiler, planner and workers would. */
final class DashboardRecords {
  static final Codecs CODECS = Codecs.singleObject();

  private DashboardRecords() {}

  @SuppressWarnings("unchecked")
  static <T extends SpecificRecord> void send(Producer<String, byte[]> producer, String topic, String key, T value) throws Exception {
    byte[] bytes = value == null ? null : CODECS.codec((Class<T>) value.getClass()).encode(topic, value);
    producer.send(new ProducerRecord<>(topic, key, bytes)).get();
  }

  static HostEnvironment host(String id, int cores) {
    return HostEnvironment.newBuilder().setHostId(id).setCpuModel("Test CPU " + id).setCpuFlags(List.of("avx2"))
        .setLogicalCores(cores).setPhysicalCores(cores).setUsableCores(cores).setUsableCpuIds(List.of())
        .setCpuQuotaCores(null).setMemoryBytes(16L << 30).setMemoryLimitBytes(null).setGpus(List.of())
        .setOnnxRuntimeVersion("1.29.0").setExecutionProviders(List.of("CPU")).setOsName("Linux").setOsVersion("6.1")
        .setOsArch("amd64").setJavaVersion("17").setBaseline(new BaselineScore(250.0, 2, 4, 6, 16, "demo-mlp"))
        .setTimestamp(1_700_000_000_000L).build();
  }

  static TimingEvent timing(String host, String version, int size, int batch, double p50Ms) {
    return TimingEvent.newBuilder().setModel("demo-mlp").setVersion(version).setHost(host).setPool("cpu").setSize(size)
        .setBatch(batch).setProvider("CPU").setGrouping(List.of()).setP50Ms(p50Ms).setP90Ms(p50Ms * 1.2)
        .setP99Ms(p50Ms * 1.5).setMeanMs(p50Ms).setSamples(100).setThroughput(1000.0 * batch / p50Ms)
        .setMemoryBytes(1 << 20).setStable(true).setPinned(true).setOk(true).setError(null).setRequestId(null)
        .setTimestamp(1_700_000_000_000L).build();
  }

  static PartitionPlan partitions(String host) {
    return PartitionPlan.newBuilder().setModel("demo-mlp").setVersion("1").setHost(host).setPool("cpu").setProvider("CPU")
        .setBatch(4).setPoolSize(4).setShareResources(4).setShareMemoryBytes(1L << 30).setRequestsPerSecond(10).setPlanned(true)
        .setSizes(List.of(2, 1, 1)).setPredictedThroughput(900.0).setMeasuredThroughput(850.0).setMaxLatencyMs(4.5)
        .setMemoryBytes(3 << 20).setUnmetRequestsPerSecond(0).setMethod("grouping").build();
  }

  static SlotAssignment slot(String host, String slot, List<Integer> cpus, String... serviceModels) {
    List<AssignedServiceModel> instances = Arrays.stream(serviceModels).map(m -> AssignedServiceModel.newBuilder()
        .setServiceModel(m).setInstanceId(m + "#0")
        .setWeightFile(m.equals("demo") ? null : new AssignedWeightFile("demo-mlp/adapters/" + m + ".onnx_adapter", "0".repeat(64)))
        .build()).toList();
    return SlotAssignment.newBuilder().setHost(host).setSlot(slot).setModel("demo-mlp").setVersion("1").setPool("cpu")
        .setCpus(cpus).setProvider("CPU").setThreads(cpus.size()).setMaxBatch(4).setServiceModels(instances).build();
  }

  static VersionChoice versions(String host) {
    return VersionChoice.newBuilder().setModel("demo-mlp").setHost(host).setChosenVersion("1").setCandidates(List.of(
        new VersionCandidate("1", "CHOSEN", 2.5, false, null, null, "fastest qualifying version: latency 2.5 ms measured on this host"),
        new VersionCandidate("2", "RUNNER_UP", 3.1, true, "other-host", 0.9, "slower"))).build();
  }

  /** A route as the planner writes it: the ready count is that of the instances. */
  static Route route(String model, String requestTopic, RouteInstance... instances) {
    return Route.newBuilder().setServiceModel(model).setRequestTopic(requestTopic)
        .setReadyInstances((int) Arrays.stream(instances).filter(RouteInstance::getReady).count())
        .setInstances(List.of(instances)).build();
  }

  /** Instance {@code <model>#<n>} on a slot, with 2 requests in flight and 3 queued. */
  static RouteInstance instance(String model, int n, String host, String slot, String notReadyBecause) {
    return new RouteInstance(model + "#" + n, host, slot, notReadyBecause == null, notReadyBecause, List.of(0), 2, 3, null);
  }

  static ServiceModel catalog(String name, String baseModel, int instances) {
    return ServiceModel.newBuilder().setName(name).setBaseModel(baseModel).setInstances(instances).build();
  }

  static HostLiveness liveness(String host, String state) {
    return HostLiveness.newBuilder().setHost(host).setState(state).setReason("test").build();
  }

  static JobStatus job(String id, String model, String state, long startedAt) {
    return JobStatus.newBuilder().setJobId(id).setServiceModel(model).setState(state).setTotal(10).setChunks(1)
        .setInputOffset(0).setResultsOffset(0).setCreatedAt(1_700_000_000_000L).setStartedAt(startedAt).build();
  }

  static Demand demand(String model, long lag) {
    return new Demand(model, 12.0, lag, 1_700_000_000_000L);
  }

  static DeadLetter deadLetter(String topic, long offset, String error) {
    return DeadLetter.newBuilder().setTopic(topic).setPartition(0).setOffset(offset).setKey(null).setValue(null)
        .setHeaders(Map.of()).setError(error).setErrorClass("DecodeException").setComponent("planner")
        .setTimestamp(1_700_000_000_000L).build();
  }
}
