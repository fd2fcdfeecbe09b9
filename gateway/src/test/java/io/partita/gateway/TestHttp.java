package io.partita.gateway;

import io.partita.common.Topics;
import io.partita.testkit.KafkaFixture;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;

/** HTTP calls and "was anything produced?" for the gateway's integration tests. */
final class TestHttp {
  static final HttpClient CLIENT = HttpClient.newHttpClient();

  private TestHttp() {}

  static HttpRequest.Builder request(Gateway gateway, String path) {
    return HttpRequest.newBuilder(URI.create("http://localhost:" + gateway.port() + path));
  }

  static HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
    return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  static HttpResponse<String> post(Gateway gateway, String path, String body, String... headers) throws Exception {
    HttpRequest.Builder b = request(gateway, path).POST(HttpRequest.BodyPublishers.ofString(body));
    if (headers.length > 0) {
      b.headers(headers);
    }
    return send(b);
  }

  static HttpResponse<String> get(Gateway gateway, String path, String... headers) throws Exception {
    HttpRequest.Builder b = request(gateway, path).GET();
    if (headers.length > 0) {
      b.headers(headers);
    }
    return send(b);
  }

  static String inferBody(float... row) {
    StringBuilder data = new StringBuilder();
    for (int i = 0; i < row.length; i++) {
      data.append(i == 0 ? "" : ",").append(row[i]);
    }
    return "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1," + row.length + "],\"data\":[" + data + "]}]}";
  }

  /**
   * Records ever written to the request topic of these (demo) service models, the one topic of their
   * base model, and to the jobs topic.
   */
  static long produced(Topics topics, List<String> serviceModels) throws Exception {
    List<String> names = new ArrayList<>();
    serviceModels.stream().map(m -> topics.requests(io.partita.models.demo.DemoMlp.MODEL_NAME)).distinct().forEach(names::add);
    names.add(topics.jobs());
    try (Admin admin = KafkaFixture.admin()) {
      // A topic the gateway created a moment ago can be described before its broker hosts it: ask again.
      return org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30))
          .ignoreExceptionsMatching(e -> e.getCause() instanceof org.apache.kafka.common.errors.UnknownTopicOrPartitionException)
          .until(() -> latestOffsets(admin, names), java.util.Objects::nonNull);
    }
  }

  private static Long latestOffsets(Admin admin, List<String> names) throws Exception {
    long total = 0;
    for (var e : admin.describeTopics(names).allTopicNames().get().entrySet()) {
      Map<TopicPartition, OffsetSpec> ask = e.getValue().partitions().stream()
          .collect(Collectors.toMap(p -> new TopicPartition(e.getKey(), p.partition()), p -> OffsetSpec.latest()));
      total += admin.listOffsets(ask).all().get().values().stream().mapToLong(o -> o.offset()).sum();
    }
    return total;
  }
}
