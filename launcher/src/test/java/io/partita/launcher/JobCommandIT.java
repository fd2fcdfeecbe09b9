package io.partita.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.gateway.Gateway;
import io.partita.gateway.GatewayConfig;
import io.partita.models.demo.DemoMlp;
import io.partita.models.demo.DemoRepository;
import io.partita.testkit.KafkaFixture;
import io.partita.worker.InferenceWorker;
import io.partita.worker.WorkerConfig;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** {@code partita job submit --wait} and {@code partita job results} against a running gateway. */
@ExtendWith(KafkaFixture.class)
class JobCommandIT {
  @TempDir Path dir;

  @Test
  void shouldSubmitWaitAndWriteTheResultsInOrder() throws Exception {
    Path repo = dir.resolve("models");
    DemoRepository.writeTo(repo);
    Topics topics = new Topics(KafkaFixture.uniquePrefix("jobcli"));
    Settings settings = Settings.of(Map.of(
        "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
        "topic.prefix", topics.prefix(),
        "model.repo", repo.toString(),
        "http.port", "0",
        "gateway.routing", "any",
        "worker.threads", "1"));
    StringBuilder lines = new StringBuilder();
    for (float[] row : DemoMlp.sampleInput(20, 4)) {
      StringBuilder data = new StringBuilder();
      for (float v : row) {
        data.append(data.length() == 0 ? "" : ",").append(v);
      }
      lines.append("{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,8],\"data\":[").append(data).append("]}]}\n");
    }
    Path input = Files.writeString(dir.resolve("in.jsonl"), lines);
    Path output = dir.resolve("out.jsonl");
    try (InferenceWorker worker = new InferenceWorker(WorkerConfig.from(settings));
         Gateway gateway = new Gateway(GatewayConfig.from(settings))) {
      worker.start();
      gateway.start();
      String url = "http://localhost:" + gateway.port();
      PrintStream stdout = System.out;
      ByteArrayOutputStream captured = new ByteArrayOutputStream();
      int code;
      try {
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        code = Partita.run("job", "submit", input.toString(), "--model", "demo-a", "--wait", "--url", url);
      } finally {
        System.setOut(stdout);
      }
      assertThat(code).isZero();
      // Standard output holds the job id on a line of its own (log lines may share the stream here).
      String id = captured.toString(StandardCharsets.UTF_8).lines().filter(l -> l.matches("job-[0-9a-f]+")).findFirst().orElseThrow();
      assertThat(Partita.run("job", "results", id, "--url", url, "-o", output.toString())).isZero();
      List<String> out = Files.readAllLines(output);
      assertThat(out).hasSize(20);
      for (int i = 0; i < 20; i++) {
        assertThat(out.get(i)).startsWith("{\"index\":" + i + ",").contains("\"outputs\"");
      }
      assertThat(Partita.run("job", "status", "job-nope", "--url", url)).isEqualTo(2);
    }
  }
}
