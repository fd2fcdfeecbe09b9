package io.partita.worker.fetch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import io.partita.models.repo.Sha256;
import java.net.InetSocketAddress;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Fetching model files by URI into a cache, from a static web server this test starts. */
class ModelFetcherTest {
  private static final byte[] MODEL = "pretend this is model.onnx".getBytes(StandardCharsets.UTF_8);

  @TempDir Path served;
  @TempDir Path cache;
  @TempDir Path repo;
  private HttpServer server;
  private final AtomicInteger gets = new AtomicInteger();
  private ModelFetcher fetcher;

  @BeforeEach
  void startServer() throws Exception {
    Files.write(served.resolve("model.onnx"), MODEL);
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", exchange -> {
      gets.incrementAndGet();
      Path file = served.resolve(exchange.getRequestURI().getPath().substring(1));
      if (!Files.isRegularFile(file)) {
        exchange.sendResponseHeaders(404, -1);
      } else {
        byte[] body = Files.readAllBytes(file);
        exchange.sendResponseHeaders(200, body.length);
        exchange.getResponseBody().write(body);
      }
      exchange.close();
    });
    server.start();
    fetcher = new ModelFetcher(Optional.of(repo), cache.resolve("models"), HttpClient.newHttpClient(), Duration.ofSeconds(10));
  }

  @AfterEach
  void stopServer() {
    server.stop(0);
  }

  private String url(String name) {
    return "http://127.0.0.1:" + server.getAddress().getPort() + "/" + name;
  }

  private long filesIn(Path dir) throws Exception {
    try (Stream<Path> s = Files.list(dir)) {
      return s.count();
    }
  }

  @Test
  void shouldFetchOverHttpIntoTheCacheAndReuseItWithoutFetchingAgain() throws Exception {
    Path first = fetcher.fetch(url("model.onnx"), Sha256.of(MODEL));
    Path second = fetcher.fetch(url("model.onnx"), Sha256.of(MODEL));

    assertThat(first).startsWith(cache.resolve("models")).isEqualTo(second);
    assertThat(Files.readAllBytes(first)).isEqualTo(MODEL);
    assertThat(gets).hasValue(1);
  }

  @Test
  void shouldRefuseAFileWhoseSha256DoesNotMatchAndLeaveNothingInTheCache() throws Exception {
    String other = Sha256.of("another model".getBytes(StandardCharsets.UTF_8));

    assertThatThrownBy(() -> fetcher.fetch(url("model.onnx"), other))
        .isInstanceOf(ModelFetcher.FetchException.class)
        .hasMessageContaining(url("model.onnx"))
        .hasMessageContaining("sha256 is " + Sha256.of(MODEL) + " but the catalog says " + other);
    assertThat(filesIn(cache.resolve("models"))).isZero();
  }

  @Test
  void shouldFetchAgainWhenTheCachedCopyWasChanged() throws Exception {
    Path cached = fetcher.fetch(url("model.onnx"), Sha256.of(MODEL));
    Files.write(cached, "tampered".getBytes(StandardCharsets.UTF_8));

    Path again = fetcher.fetch(url("model.onnx"), Sha256.of(MODEL));

    assertThat(Files.readAllBytes(again)).isEqualTo(MODEL);
    assertThat(gets).hasValue(2);
  }

  @Test
  void shouldNameTheHttpStatusWhenTheServerHasNoSuchFile() {
    assertThatThrownBy(() -> fetcher.fetch(url("missing.onnx"), Sha256.of(MODEL)))
        .isInstanceOf(ModelFetcher.FetchException.class)
        .hasMessageContaining("HTTP 404");
  }

  @Test
  void shouldFetchFileUrisAndRepositoryPathsButNotPathsOutOfTheRepository() throws Exception {
    Files.createDirectories(repo.resolve("m/1"));
    Files.write(repo.resolve("m/1/model.onnx"), MODEL);

    assertThat(Files.readAllBytes(fetcher.fetch(served.resolve("model.onnx").toUri().toString(), Sha256.of(MODEL)))).isEqualTo(MODEL);
    assertThat(Files.readAllBytes(fetcher.fetch("m/1/model.onnx", Sha256.of(MODEL)))).isEqualTo(MODEL);
    assertThatThrownBy(() -> fetcher.fetch("../outside/model.onnx", Sha256.of(MODEL)))
        .isInstanceOf(ModelFetcher.FetchException.class).hasMessageContaining("../outside/model.onnx");
    assertThatThrownBy(() -> fetcher.fetch("ftp://example/model.onnx", Sha256.of(MODEL)))
        .isInstanceOf(ModelFetcher.FetchException.class).hasMessageContaining("scheme 'ftp' is not supported");
  }
}
