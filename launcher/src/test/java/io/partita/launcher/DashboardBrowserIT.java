package io.partita.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.partita.avro.SlotAssignment;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.common.serde.Codecs;
import io.partita.gateway.Gateway;
import io.partita.gateway.GatewayConfig;
import io.partita.models.demo.DemoMlp;
import io.partita.models.demo.DemoRepository;
import io.partita.models.repo.ModelRepository;
import io.partita.models.repo.RepositoryIndex;
import io.partita.planner.PlannerConfig;
import io.partita.planner.PlannerService;
import io.partita.profiler.ProfilerConfig;
import io.partita.profiler.ProfilerService;
import io.partita.testkit.KafkaFixture;
import io.partita.worker.InferenceWorker;
import io.partita.worker.WorkerConfig;
import java.io.File;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.Keys;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebDriverException;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.WindowType;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;

/**
 * The dashboard in a real browser (Debian's chromium, headless, through chromedriver) against the
 * whole of Partita in this JVM, as {@code partita local} runs it: planner with the catalog of the
 * demo models, a worker that follows the plan, the gateway (routing by the plan, with an API key),
 * and the profiler measuring the demo models at start. Every view has its own URL
 * ({@code /dashboard/#plan}): the test follows the links, the back button and a shared link.
 * Screenshots of every view go to {@code launcher/target/dashboard/} for review.
 */
@Tag("slow")
@ExtendWith(KafkaFixture.class)
class DashboardBrowserIT {
  private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
  private static final String KEY = "browser-test-key-1";
  private static final String HOST = "browser-host";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Path SHOTS = Path.of("target", "dashboard");

  @TempDir Path dir;
  private final List<AutoCloseable> running = new ArrayList<>();
  private final HttpClient http = HttpClient.newHttpClient();
  private WebDriver browser;

  @AfterEach
  void tearDown() throws Exception {
    if (browser != null) {
      browser.quit();
    }
    for (int i = running.size() - 1; i >= 0; i--) {
      running.get(i).close();
    }
  }

  @Test
  void shouldShowTheMeasurementsThePlanAndLiveTrafficOfARunningPartita() throws Exception {
    Assumptions.assumeTrue(Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER),
        "needs Debian's chromium and chromium-driver (/usr/bin/chromium, /usr/bin/chromedriver): apt-get install -y chromium chromium-driver");
    Path repo = dir.resolve("models");
    DemoRepository.writeTo(repo);
    RepositoryIndex index = ModelRepository.scan(repo);
    Topics topics = new Topics(KafkaFixture.uniquePrefix("browser"));
    Settings settings = Settings.of(Map.ofEntries(
        Map.entry("kafka.bootstrap.servers", KafkaFixture.bootstrapServers()),
        Map.entry("topic.prefix", topics.prefix()),
        Map.entry("model.repo", repo.toString()),
        Map.entry("host.id", HOST),
        Map.entry("http.port", "0"),
        Map.entry("gateway.id", "browser"),
        Map.entry("gateway.routing", "plan"),
        Map.entry("gateway.api-keys", KEY + ":*"),
        Map.entry("gateway.demand.interval.ms", "2000"),
        Map.entry("worker.threads", "1"),
        Map.entry("worker.follow-plan", "true"),
        Map.entry("worker.status.interval.ms", "1000"),
        Map.entry("planner.state.dir", dir.resolve("planner").toString()),
        Map.entry("planner.debounce.ms", "200"),
        Map.entry("planner.replication.factor", "1"),
        Map.entry("topics.replication", "1")));
    PlannerConfig plannerConfig = PlannerConfig.from(settings);
    start(new PlannerService(plannerConfig));
    assertThat(PlannerCommand.publishCatalog(plannerConfig, repo, plannerConfig.codecs())).isPositive();
    start(new InferenceWorker(WorkerConfig.from(settings)));
    Gateway gateway = start(new Gateway(GatewayConfig.from(settings)));
    ProfilerService profiler = start(new ProfilerService(ProfilerConfig.from(settings)));
    List<CompletableFuture<?>> profiling = new ArrayList<>();
    for (String model : index.models().keySet()) {
      profiling.add(profiler.profileNow(model, null, 50)); // every version, as partita local does
    }
    // Slow on a busy 2-core machine (minutes); the timing view is checked for every version below.
    CompletableFuture.allOf(profiling.toArray(CompletableFuture[]::new)).get(600, TimeUnit.SECONDS);
    String base = "http://localhost:" + gateway.port();
    for (String model : DemoMlp.SERVICE_MODELS) { // the plan is followed: every service model is served
      await().atMost(Duration.ofSeconds(240)).untilAsserted(() -> assertThat(infer(base, model).statusCode()).isEqualTo(200));
    }

    browser = chromium();
    browser.get(base + "/");
    // With API keys configured the page asks for one; everything after is shown for that key.
    WebElement keyField = waitFor(By.id("api-key"));
    assertThat(browser.switchTo().activeElement()).isEqualTo(keyField);
    keyField.sendKeys(KEY, Keys.ENTER);
    assertThat(browser.getCurrentUrl()).startsWith(base + "/dashboard/");
    ((JavascriptExecutor) browser).executeScript("window.notReloaded = true;");

    // The overview is the first screen, at its own URL: every demo model ready (each answered above), and where it runs.
    inPage(Duration.ofSeconds(10)).until(() -> browser.findElement(By.id("view-overview")).isDisplayed());
    assertThat(browser.getCurrentUrl()).isEqualTo(base + "/dashboard/#overview");
    for (String model : DemoMlp.SERVICE_MODELS) {
      inPage(Duration.ofSeconds(30)).untilAsserted(() -> {
        WebElement row = browser.findElement(By.cssSelector("#overview-table tr[data-model='" + model + "']"));
        assertThat(row.getAttribute("data-state")).as("readiness of %s", model).isEqualTo("READY");
        assertThat(row.findElement(By.cssSelector("td[data-field='ready']")).getText()).startsWith("Ready");
        assertThat(row.findElement(By.cssSelector("td[data-field='where']")).getText()).contains(HOST + ": version");
      });
    }
    assertThat(browser.findElement(By.id("overview-headline")).getText())
        .isEqualTo("All " + DemoMlp.SERVICE_MODELS.size() + " models are ready to answer.");
    screenshot("overview");

    // Hosts: the environment the profiler published.
    show("hosts");
    inPage(Duration.ofSeconds(30)).until(() -> !browser.findElements(By.cssSelector("#view-hosts [data-host='" + HOST + "']")).isEmpty());
    screenshot("hosts");

    // Timing matrix: a plot with points for every version of every demo model, and the table of its numbers.
    show("timings");
    for (String model : index.models().keySet()) {
      for (String version : index.models().get(model).versions().keySet()) {
        String figure = "#view-timings figure[data-model='" + model + "'][data-version='" + version + "']";
        inPage(Duration.ofSeconds(30)).untilAsserted(() -> {
          WebElement f = browser.findElement(By.cssSelector(figure));
          int points = Integer.parseInt(f.getAttribute("data-points"));
          assertThat(points).as("points of %s v%s", model, version).isPositive();
          assertThat(f.findElements(By.cssSelector(".table-wrap tbody tr"))).hasSize(points);
          assertThat(f.findElements(By.cssSelector(".uplot canvas"))).as("plots drawn").hasSize(2);
        });
      }
    }
    screenshot("timings");

    // The plan: the slots the plan topic gives this host, one segment each.
    show("plan");
    inPage(Duration.ofSeconds(30)).untilAsserted(() -> {
      Set<String> planned = plannedSlots(topics);
      assertThat(planned).isNotEmpty();
      Set<String> shown = browser.findElements(By.cssSelector("#view-plan [data-host='" + HOST + "'] .bar .seg[data-slot]")).stream()
          .map(e -> e.getAttribute("data-slot")).collect(Collectors.toCollection(TreeSet::new));
      assertThat(shown).isEqualTo(planned);
    });
    screenshot("plan");

    // Jobs, reached with the keyboard: a job submitted through the API fills its progress bar.
    String jobId = submitJob(base, 40);
    WebElement jobsTab = browser.findElement(By.cssSelector("#tabs a[data-view='jobs']"));
    jobsTab.sendKeys(Keys.ENTER);
    inPage(Duration.ofSeconds(10)).until(() -> "page".equals(jobsTab.getAttribute("aria-current")));
    assertThat(browser.getCurrentUrl()).endsWith("/dashboard/#jobs");
    inPage(Duration.ofSeconds(90)).untilAsserted(() -> {
      WebElement row = browser.findElement(By.cssSelector("#view-jobs tr[data-job='" + jobId + "']"));
      assertThat(row.findElement(By.tagName("progress")).getAttribute("value")).isEqualTo("100");
      assertThat(row.getText()).contains("DONE", "40 / 40");
    });
    screenshot("jobs");

    // Routes and traffic: a new request moves the numbers, without a reload.
    show("traffic");
    By requests = By.cssSelector("#traffic-table tr[data-model='demo-a'] td[data-field='requests']");
    long before = inPage(Duration.ofSeconds(30)).until(() -> Long.parseLong(browser.findElement(requests).getText().strip()), n -> true);
    assertThat(infer(base, "demo-a").statusCode()).isEqualTo(200);
    inPage(Duration.ofSeconds(15)).untilAsserted(() ->
        assertThat(Long.parseLong(browser.findElement(requests).getText().strip())).isGreaterThan(before));
    assertThat(((JavascriptExecutor) browser).executeScript("return window.notReloaded === true;")).isEqualTo(true);
    screenshot("traffic");

    show("deadletters");
    screenshot("deadletters");

    // What-if: a copy of this host planned beside the live plan.
    show("whatif");
    WebElement text = browser.findElement(By.id("whatif-text"));
    text.clear();
    text.sendKeys("hosts:\n  - id: whatif-host\n    like: " + HOST + "\n");
    browser.findElement(By.cssSelector("#whatif-form button[type='submit']")).click();
    inPage(Duration.ofSeconds(120)).untilAsserted(() -> {
      assertThat(browser.findElement(By.id("whatif-status")).getText()).isEqualTo("Planned.");
      assertThat(browser.findElements(By.cssSelector("#whatif-plan [data-host='whatif-host'] .seg[data-slot]"))).isNotEmpty();
      assertThat(browser.findElements(By.cssSelector("#whatif-live [data-host='" + HOST + "'] .seg[data-slot]"))).isNotEmpty();
    });
    screenshot("whatif");

    // Each view switch was a history entry: back shows the view before.
    browser.navigate().back();
    inPage(Duration.ofSeconds(10)).until(() -> browser.findElement(By.id("view-deadletters")).isDisplayed());
    assertThat(browser.getCurrentUrl()).endsWith("/dashboard/#deadletters");
    assertThat(browser.findElement(By.id("view-whatif")).isDisplayed()).isFalse();

    // A shared link opens its view, after the key prompt of a fresh tab; an unknown view falls back to the overview.
    browser.switchTo().newWindow(WindowType.TAB);
    browser.get(base + "/dashboard/#plan");
    inPage(Duration.ofSeconds(30)).until(() -> displayed(By.id("api-key")) || displayed(By.id("view-plan")));
    if (displayed(By.id("api-key"))) {
      browser.findElement(By.id("api-key")).sendKeys(KEY, Keys.ENTER);
    }
    inPage(Duration.ofSeconds(30)).until(() -> displayed(By.id("view-plan")));
    assertThat(browser.getCurrentUrl()).endsWith("/dashboard/#plan");
    assertThat(browser.findElement(By.cssSelector("#tabs a[data-view='plan']")).getAttribute("aria-current")).isEqualTo("page");
    assertThat(displayed(By.id("view-overview"))).isFalse();
    browser.get(base + "/dashboard/#no-such-view");
    inPage(Duration.ofSeconds(10)).until(() -> displayed(By.id("view-overview")));
    assertThat(browser.getCurrentUrl()).endsWith("/dashboard/#overview");
    assertThat(displayed(By.id("view-plan"))).isFalse();

    List<String> errors = new ArrayList<>();
    for (LogEntry e : browser.manage().logs().get(LogType.BROWSER)) {
      if (e.getLevel().intValue() >= Level.SEVERE.intValue()) {
        errors.add(e.getMessage());
      }
    }
    assertThat(errors).as("browser console errors").isEmpty();
  }

  private WebDriver chromium() throws Exception {
    ChromeOptions options = new ChromeOptions();
    options.setBinary(CHROMIUM.toFile());
    options.addArguments("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
        "--window-size=1400,1000", "--user-data-dir=" + Files.createDirectories(dir.resolve("chromium-profile")));
    LoggingPreferences logs = new LoggingPreferences();
    logs.enable(LogType.BROWSER, Level.ALL);
    options.setCapability("goog:loggingPrefs", logs);
    ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(CHROMEDRIVER.toFile())
        .usingAnyFreePort().build();
    return new ChromeDriver(service, options);
  }

  /** Waits for a page state; the page re-renders a view when its data changes, so an element may go stale between two reads. */
  private static ConditionFactory inPage(Duration atMost) {
    return await().atMost(atMost).ignoreExceptionsInstanceOf(WebDriverException.class);
  }

  /** Clicks a view's link: the view shows and the URL names it. */
  private void show(String view) {
    browser.findElement(By.cssSelector("#tabs a[data-view='" + view + "']")).click();
    inPage(Duration.ofSeconds(10)).until(() -> browser.findElement(By.id("view-" + view)).isDisplayed());
    assertThat(browser.getCurrentUrl()).endsWith("/dashboard/#" + view);
  }

  private boolean displayed(By by) {
    List<WebElement> found = browser.findElements(by);
    return !found.isEmpty() && found.get(0).isDisplayed();
  }

  private WebElement waitFor(By by) {
    inPage(Duration.ofSeconds(30)).until(() -> !browser.findElements(by).isEmpty() && browser.findElement(by).isDisplayed());
    return browser.findElement(by);
  }

  private void screenshot(String name) throws Exception {
    Files.createDirectories(SHOTS);
    File shot = ((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE);
    Files.copy(shot.toPath(), SHOTS.resolve(name + ".png"), StandardCopyOption.REPLACE_EXISTING);
  }

  /** The slots of this host as {@code <prefix>.plan.assignments} has them now (latest per key; tombstones remove). */
  private static Set<String> plannedSlots(Topics topics) {
    Map<String, SlotAssignment> slots = new HashMap<>();
    try (KafkaConsumer<String, byte[]> consumer = KafkaFixture.consumer(topics.planAssignments())) {
      List<ConsumerRecord<String, byte[]>> records = new ArrayList<>();
      for (int idle = 0; idle < 3; ) {
        var batch = consumer.poll(Duration.ofMillis(500));
        batch.forEach(records::add);
        idle = batch.isEmpty() ? idle + 1 : 0;
      }
      for (ConsumerRecord<String, byte[]> r : records) {
        if (r.value() == null) {
          slots.remove(r.key());
        } else {
          slots.put(r.key(), Codecs.singleObject().codec(SlotAssignment.class).decode(r.topic(), r.value()));
        }
      }
    }
    return slots.values().stream().filter(s -> s.getHost().equals(HOST)).map(SlotAssignment::getSlot)
        .collect(Collectors.toCollection(TreeSet::new));
  }

  private String submitJob(String base, int items) throws Exception {
    StringBuilder lines = new StringBuilder();
    for (int i = 0; i < items; i++) {
      lines.append(inferBody(i)).append('\n');
    }
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base + "/v2/jobs?model=demo"))
        .header("Authorization", "Bearer " + KEY).POST(HttpRequest.BodyPublishers.ofString(lines.toString())).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
    JsonNode job = JSON.readTree(r.body());
    return job.get("id").asText();
  }

  private HttpResponse<String> infer(String base, String model) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create(base + "/v2/models/" + model + "/infer")).timeout(Duration.ofSeconds(30))
        .header("Authorization", "Bearer " + KEY).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(inferBody(7))).build(), HttpResponse.BodyHandlers.ofString());
  }

  private static String inferBody(int seed) {
    StringBuilder data = new StringBuilder();
    for (float v : DemoMlp.sampleInput(1, seed)[0]) {
      data.append(data.length() == 0 ? "" : ",").append(v);
    }
    return "{\"inputs\":[{\"name\":\"" + DemoMlp.INPUT + "\",\"datatype\":\"FP32\",\"shape\":[1,8],\"data\":[" + data + "]}]}";
  }

  private <T extends AutoCloseable> T start(T service) throws Exception {
    if (service instanceof io.partita.common.Service s) {
      s.start();
    }
    running.add(service);
    return service;
  }
}
