package io.partita.bench;

import io.partita.avro.BaselineScore;
import io.partita.avro.HostEnvironment;
import io.partita.avro.TimingEvent;
import io.partita.common.Topic;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.models.demo.DemoRepository;
import io.partita.models.repo.ModelRepository;
import io.partita.planner.catalog.CatalogPublisher;
import io.partita.planner.plan.Keys;
import io.partita.planner.plan.PlanSettings;
import io.partita.planner.replay.PlanRun;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Replay re-planning speed: the planner topology (the same builder the live planner and
 * {@code partita replay} use, in Kafka's test driver) fed the demo catalog, a set of synthetic
 * hosts and a stream of synthetic timing events, planning after every {@code planEvery} events as
 * the debounced live planner would. Reports events per second, planning included.
 */
final class ReplayBench {
  private ReplayBench() {}

  record Outcome(long events, int hosts, int plans, double seconds, int planRecords) {
    double eventsPerSecond() {
      return events / seconds;
    }
  }

  static Outcome run(Path workDir, long events, int hosts, int planEvery) throws Exception {
    Topics topics = new Topics("replay");
    Codecs codecs = Codecs.singleObject();
    Path repo = Files.createTempDirectory(workDir, "replay-repo");
    DemoRepository.writeTo(repo);
    Path state = Files.createTempDirectory(workDir, "replay-state");
    Topic<TimingEvent> timings = topics.profileTimings(codecs);
    Topic<HostEnvironment> environments = topics.hostEnvironments(codecs);
    int[] sizes = {1, 2, 4, 8};
    int[] batches = {1, 2, 4, 8, 16, 32};
    List<String> versions = List.of("1", "2");
    try (PlanRun run = new PlanRun(PlanSettings.defaults(topics), codecs, state)) {
      long t = 1_700_000_000_000L;
      for (var record : CatalogPublisher.records(ModelRepository.scan(repo), topics, codecs)) {
        run.pipe(record.topic(), record.key(), record.value(), t);
      }
      for (int h = 0; h < hosts; h++) {
        HostEnvironment env = HostEnvironment.newBuilder()
            .setHostId(host(h)).setCpuModel("synthetic").setCpuFlags(List.of("avx2")).setLogicalCores(8).setPhysicalCores(8)
            .setUsableCores(8).setUsableCpuIds(List.of(0, 1, 2, 3, 4, 5, 6, 7)).setMemoryBytes(16L << 30)
            .setOnnxRuntimeVersion("1.29.0").setExecutionProviders(List.of("CPU")).setOsName("Linux").setOsVersion("6")
            .setOsArch("amd64").setJavaVersion("17")
            .setBaseline(new BaselineScore(100_000.0 * (1 + h % 5), 8, 32, 10, 80, "reference-mlp")).setTimestamp(t).build();
        run.pipe(environments.name(), host(h), environments.encode(env), t);
      }
      run.plan();
      // Host ids made once: String.format per event cost the benchmark itself about 15 % of its time.
      String[] hostIds = new String[hosts];
      for (int h = 0; h < hosts; h++) {
        hostIds[h] = host(h);
      }
      SplittableRandom random = new SplittableRandom(42);
      int plans = 0;
      long start = System.nanoTime();
      for (long i = 0; i < events; i++) {
        int h = (int) (i % hosts);
        int k = sizes[(int) ((i / hosts) % sizes.length)];
        int b = batches[(int) ((i / ((long) hosts * sizes.length)) % batches.length)];
        String version = versions.get((int) ((i / ((long) hosts * sizes.length * batches.length)) % versions.size()));
        double base = b * 0.02 / Math.pow(k, 0.8) * (1 + h % 3);
        double p50 = base * (0.9 + 0.2 * random.nextDouble());
        TimingEvent e = TimingEvent.newBuilder()
            .setModel("demo-mlp").setVersion(version).setHost(hostIds[h]).setPool("cpu").setSize(k).setBatch(b).setProvider("CPU")
            .setP50Ms(p50).setP90Ms(p50 * 1.1).setP99Ms(p50 * 1.3).setMeanMs(p50 * 1.02).setSamples(200)
            .setThroughput(b * 1000.0 / p50).setMemoryBytes(4L << 20).setStable(true).setPinned(true).setOk(true)
            .setTimestamp(++t).build();
        run.pipe(timings.name(), Keys.timing(e), timings.encode(e), t);
        if ((i + 1) % planEvery == 0) {
          run.plan();
          plans++;
        }
      }
      run.plan();
      plans++;
      double seconds = (System.nanoTime() - start) / 1e9;
      int records = run.tables().values().stream().mapToInt(Map::size).sum();
      return new Outcome(events, hosts, plans, seconds, records);
    }
  }

  private static String host(int h) {
    return String.format("host-%03d", h);
  }
}
