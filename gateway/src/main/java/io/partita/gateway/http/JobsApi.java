package io.partita.gateway.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.partita.avro.JobItem;
import io.partita.avro.JobItemResult;
import io.partita.avro.JobStatus;
import io.partita.gateway.auth.ApiKeys;
import io.partita.gateway.catalog.ModelCatalog;
import io.partita.gateway.jobs.JobLines;
import io.partita.gateway.jobs.JobRunner;
import io.partita.gateway.jobs.JobStates;
import io.partita.gateway.jobs.JobStore;
import io.partita.gateway.jobs.JobsConfig;
import io.partita.gateway.jobs.RateWindow;
import io.partita.gateway.jobs.ResultOrder;
import io.partita.gateway.oip.InferBody;
import io.partita.gateway.oip.JsonLimits;
import io.partita.gateway.oip.JsonTensors;
import io.partita.gateway.refusal.Refusal;
import io.partita.gateway.refusal.Refusal.Kind;
import io.partita.gateway.refusal.SafeText;
import io.partita.gateway.server.HttpStatus;
import io.partita.models.repo.ModelEntry;
import io.partita.models.repo.RepositoryIndex;
import io.partita.models.repo.ServiceModelEntry;
import io.partita.models.repo.UnsafePathException;
import io.partita.models.repo.VersionEntry;
import io.partita.models.repo.WeightFiles;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The batch job endpoints:
 *
 * <pre>
 *   POST   /v2/jobs?model=M[&amp;version=V]            body: JSON lines, one OIP infer request per line
 *   POST   /v2/jobs?model=M[&amp;version=V]&amp;file=NAME  input: a file in gateway.jobs.input.dir
 *   GET    /v2/jobs                                  the jobs this key may see, newest first
 *   GET    /v2/jobs/{id}                             state, done, failed, total, rate, ETA
 *   GET    /v2/jobs/{id}/results                     JSON lines in input order, one per item
 *   DELETE /v2/jobs/{id}                             cancel
 * </pre>
 *
 * Reading a body, writing a job and streaming results touch Kafka, so they run on the jobs executor,
 * never on an HTTP thread.
 */
public final class JobsApi {
  private static final Logger log = LoggerFactory.getLogger(JobsApi.class);

  private final ModelCatalog catalog;
  private final JobStore store;
  private final ApiKeys keys;
  private final JobsConfig config;
  private final ExecutorService executor;
  private final JobRunner runner;
  private final JsonLimits json;

  /** @param runner this gateway's job runner, for live counts of the job it runs */
  public JobsApi(ModelCatalog catalog, JobStore store, JobRunner runner, ApiKeys keys, JobsConfig config, ExecutorService executor) {
    this(catalog, store, runner, keys, config, executor, JsonLimits.DEFAULTS);
  }

  /**
   * @param runner this gateway's job runner, for live counts of the job it runs
   * @param json the limits each job line is read within ({@code gateway.json.*})
   */
  public JobsApi(ModelCatalog catalog, JobStore store, JobRunner runner, ApiKeys keys, JobsConfig config, ExecutorService executor,
      JsonLimits json) {
    this.json = json;
    this.runner = runner;
    this.catalog = catalog;
    this.store = store;
    this.keys = keys;
    this.config = config;
    this.executor = executor;
  }

  void handle(Call call, String[] p, String key) {
    String method = call.method();
    if (p.length == 3) {
      if (method.equals("POST")) {
        submit(call, key);
      } else if (method.equals("GET") || method.equals("HEAD")) {
        authorize(key, null);
        ArrayNode jobs = InferBody.JSON.createArrayNode();
        // A key sees the jobs it submitted (a key allowed every model sees all), for models it may still use.
        store.all().stream().filter(s -> keys.check(key, s.getServiceModel()).allowed() && keys.maySee(key, s.getOwner())).limit(1000)
            .forEach(s -> jobs.add(json(s)));
        ObjectNode out = InferBody.JSON.createObjectNode();
        out.set("jobs", jobs);
        call.json(200, out);
      } else {
        throw new Refusal(Kind.WRONG_METHOD, "/v2/jobs takes POST (submit) or GET (list)");
      }
      return;
    }
    if (p.length > 5 || (p.length == 5 && !p[4].equals("results"))) {
      throw Refusal.notFound("no such endpoint");
    }
    authorize(key, null);
    String jobId = p[3];
    // Another key's job is answered exactly as a job that does not exist: its existence is not told.
    JobStatus status = store.status(jobId).filter(s -> keys.maySee(key, s.getOwner()))
        .orElseThrow(() -> Refusal.notFound("job '" + SafeText.name(jobId) + "' is not known"));
    authorize(key, status.getServiceModel());
    call.model = status.getServiceModel();
    if (p.length == 5) {
      HttpApi.requireGet(method);
      if (!JobStates.isFinal(status.getState())) {
        throw new Refusal(Kind.CONFLICT, "job " + jobId + " is " + status.getState() + " (" + status.getDone() + " of "
            + status.getTotal() + " done); its results are ready when it is DONE, CANCELLED or FAILED");
      }
      executor.execute(() -> results(call, status));
    } else if (method.equals("GET") || method.equals("HEAD")) {
      call.json(200, json(JobStates.isFinal(status.getState()) ? status : runner.live(jobId).orElse(status)));
    } else if (method.equals("DELETE")) {
      if (JobStates.isFinal(status.getState())) {
        throw new Refusal(Kind.CONFLICT, "job " + jobId + " is already " + status.getState());
      }
      executor.execute(() -> guarded(call, () -> call.json(202, json(store.cancel(status)))));
    } else {
      throw new Refusal(Kind.WRONG_METHOD, "/v2/jobs/{id} takes GET or DELETE");
    }
  }

  private void submit(Call call, String key) {
    Map<String, String> query = query(call.exchange.getRequestURI().getRawQuery());
    String model = query.get("model");
    if (model == null || model.isBlank()) {
      throw Refusal.badInput("model: missing; POST /v2/jobs?model=<service model>");
    }
    authorize(key, model);
    call.model = model;
    RepositoryIndex index = catalog.current();
    ServiceModelEntry service = index.serviceModels().get(model);
    if (service == null) {
      throw Refusal.notFound("model '" + SafeText.name(model) + "' is not known; known models: " + index.serviceModels().keySet());
    }
    ModelEntry entry = index.models().get(service.baseModel());
    String version = query.get("version");
    VersionEntry v = version == null ? entry.latest() : entry.version(version).orElseThrow(() -> Refusal.notFound(
        "version '" + SafeText.name(version) + "' of model '" + model + "' does not exist; versions: " + entry.versions().keySet()));
    String file = query.get("file");
    executor.execute(() -> guarded(call, () -> {
      byte[] body = file == null ? call.body(config.maxBodyBytes(), "gateway.jobs.max.body.bytes") : readInputFile(file);
      List<JobItem> items = JobLines.parse(body, v.signature(), config.maxItems(), json);
      JobStatus status = store.submit(new JobStore.NewJob(service.name(), version, items, keys.owner(key)));
      log.info("Job {} accepted: {} items for {}", status.getJobId(), status.getTotal(), model);
      call.exchange.getResponseHeaders().set("Location", "/v2/jobs/" + status.getJobId());
      call.json(201, json(status));
    }));
  }

  private byte[] readInputFile(String name) throws IOException {
    Path dir = config.inputDir().orElseThrow(() -> Refusal.badInput(
        "file: jobs from files are off on this gateway; set gateway.jobs.input.dir or send the lines as the body"));
    Path path;
    try {
      path = WeightFiles.resolveInside(dir, name);
    } catch (UnsafePathException e) {
      throw Refusal.badInput("file '" + SafeText.name(name) + "': not allowed; give the name of a file inside the job input directory");
    }
    if (!Files.isRegularFile(path)) {
      throw Refusal.notFound("file '" + SafeText.name(name) + "': no such file in the job input directory");
    }
    if (Files.size(path) > config.maxBodyBytes()) {
      throw new Refusal(Kind.TOO_LARGE, "file '" + SafeText.name(name) + "': over the limit of " + config.maxBodyBytes() + " bytes (gateway.jobs.max.body.bytes)");
    }
    return Files.readAllBytes(path);
  }

  private void results(Call call, JobStatus status) {
    ResultOrder<JobItemResult> order = new ResultOrder<>(status.getTotal());
    call.stream(200, "application/x-ndjson", out -> {
      try {
        store.readResults(status.getJobId(), status.getResultsOffset(), result -> {
          order.offer(result.getIndex(), result, r -> line(out, status, r));
          return !order.complete();
        });
        // Items with no result never ran (a cancelled or failed job): attempts 0 marks them.
        order.finish(i -> JobItemResult.newBuilder().setJobId(status.getJobId()).setIndex(i).setAttempts(0).build(),
            r -> line(out, status, r));
      } catch (UncheckedIOException e) {
        throw e.getCause();
      }
    });
  }

  /** Writes one result line, in the shape of an OIP infer answer plus its input position. */
  private static void line(OutputStream out, JobStatus status, JobItemResult r) {
    ObjectNode n = InferBody.JSON.createObjectNode();
    n.put("index", r.getIndex());
    if (r.getClientId() != null) {
      n.put("id", r.getClientId());
    }
    if (r.getAttempts() == 0) {
      n.put("error", JobStates.CANCELLED.equals(status.getState()) ? "not run: the job was cancelled"
          : JobStates.FAILED.equals(status.getState()) ? "not run: the job failed" : "no result was recorded");
      n.put("code", "NOT_RUN");
    } else if (r.getError() != null) {
      n.put("error", r.getError().getMessage());
      n.put("code", r.getError().getCode().name());
      n.put("status", HttpStatus.of(r.getError().getCode()));
    } else {
      n.put("model_name", status.getServiceModel());
      if (r.getModelVersion() != null) {
        n.put("model_version", r.getModelVersion());
      }
      ArrayNode outputs = n.putArray("outputs");
      r.getOutputs().forEach(t -> outputs.add(JsonTensors.toJson(t)));
    }
    try {
      out.write(InferBody.JSON.writeValueAsBytes(n));
      out.write('\n');
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void guarded(Call call, IoAction action) {
    try {
      action.run();
    } catch (Refusal e) {
      call.error(HttpStatus.of(e.kind()), e.getMessage());
    } catch (IOException | RuntimeException e) {
      log.error("Job request {} failed", call.requestId, e);
      call.error(e instanceof IllegalStateException ? 503 : 500,
          e instanceof IllegalStateException ? "the job could not be stored in Kafka; try again" : "internal error; see the gateway log for request " + call.requestId);
    }
  }

  private interface IoAction {
    void run() throws IOException;
  }

  private void authorize(String key, String model) {
    ApiKeys.Decision decision = keys.check(key, model);
    if (!decision.allowed()) {
      throw decision.refused();
    }
  }

  private static Map<String, String> query(String raw) {
    Map<String, String> out = new HashMap<>();
    if (raw == null || raw.isEmpty()) {
      return out;
    }
    for (String part : raw.split("&")) {
      int eq = part.indexOf('=');
      String k = URLDecoder.decode(eq < 0 ? part : part.substring(0, eq), StandardCharsets.UTF_8);
      String v = eq < 0 ? "" : URLDecoder.decode(part.substring(eq + 1), StandardCharsets.UTF_8);
      out.put(k, v);
    }
    return out;
  }

  /** A job's status as JSON. */
  static ObjectNode json(JobStatus s) {
    ObjectNode n = InferBody.JSON.createObjectNode();
    n.put("id", s.getJobId());
    n.put("model", s.getServiceModel());
    n.put("version", s.getVersion());
    n.put("state", s.getState());
    n.put("total", s.getTotal());
    n.put("done", s.getDone());
    n.put("failed", s.getFailed());
    boolean running = !JobStates.isFinal(s.getState()) && s.getStartedAt() > 0;
    n.put("rate", running ? Math.round(s.getRatePerSecond() * 10) / 10.0 : 0.0);
    long eta = RateWindow.etaSeconds(s.getTotal() - s.getDone(), s.getRatePerSecond());
    if (JobStates.isFinal(s.getState())) {
      n.put("eta_seconds", 0);
    } else if (running && eta >= 0) {
      n.put("eta_seconds", eta);
    } else {
      n.putNull("eta_seconds");
    }
    n.put("created_at", Instant.ofEpochMilli(s.getCreatedAt()).toString());
    n.put("started_at", s.getStartedAt() > 0 ? Instant.ofEpochMilli(s.getStartedAt()).toString() : null);
    n.put("updated_at", Instant.ofEpochMilli(s.getUpdatedAt()).toString());
    n.put("runner", s.getRunner());
    n.put("message", s.getMessage());
    return n;
  }
}
