package io.partita.worker.slot;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.partita.avro.AssignedServiceModel;
import io.partita.avro.AssignedWeightFile;
import io.partita.avro.SlotAssignment;
import io.partita.common.config.ConfigException;
import io.partita.models.repo.ModelEntry;
import io.partita.models.repo.RepositoryIndex;
import io.partita.models.repo.ServiceModelEntry;
import io.partita.models.repo.VersionEntry;
import io.partita.models.repo.WeightFile;
import io.partita.runtime.CpuList;
import io.partita.runtime.Provider;
import io.partita.runtime.SlotConfig;
import io.partita.worker.serving.RequestCheck;
import io.partita.worker.serving.WeightFileRef;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Where slots come from until the worker follows {@code plan.assignments}: a static list of {@link
 * SlotAssignment} records, built from the settings or read from a file, then checked against the
 * model repository and turned into {@link SlotSpec}s. Every error is a {@link ConfigException} that
 * names the setting or the entry and field at fault.
 */
public final class Assignments {
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,200}");
  private static final Set<String> FIELDS = Set.of("host", "slot", "model", "version", "pool", "cpus", "gpu", "provider",
      "threads", "maxBatch", "memoryBudgetBytes", "serviceModels", "planId", "timestamp");
  private static final Set<String> SERVICE_FIELDS = Set.of("serviceModel", "instanceId", "weightFile");
  private static final Set<String> FILE_FIELDS = Set.of("path", "sha256");

  private Assignments() {}

  /**
   * What the assignments leave open.
   *
   * @param host this worker's host id
   * @param threads intra-op threads of an unpinned CPU slot (0 = ONNX Runtime's default)
   * @param maxBatch largest batch in rows
   * @param budgetBytes memory budget for weight files per slot (0 = no limit)
   * @param spin idle intra-op threads of pinned CPU slots spin ({@code worker.spin})
   */
  public record Defaults(String host, int threads, int maxBatch, long budgetBytes, boolean spin) {}

  /**
   * The static assignment from settings. For every version of every model: without {@code sizes},
   * one slot with {@code threads} unpinned threads (or on GPU {@code gpu} when {@code gpu >= 0});
   * with {@code sizes}, one slot per size, each pinned to that many CPUs taken in order from the
   * usable ones (every version gets the same CPUs: versions are alternatives, the planner runs one).
   * Each slot serves every service model of its model.
   */
  public static List<SlotAssignment> fromSettings(RepositoryIndex index, Defaults defaults, List<Integer> sizes, int gpu, List<Integer> usableCpus) {
    if (!sizes.isEmpty() && gpu >= 0) {
      throw new ConfigException("worker.partitions cuts CPU partitions and worker.cuda asks for a GPU slot; "
          + "use one of them, or worker.assignments for a mix");
    }
    int need = sizes.stream().mapToInt(Integer::intValue).sum();
    if (need > usableCpus.size()) {
      throw new ConfigException("worker.partitions=" + join(sizes) + ": the partitions need " + need + " CPUs but this process may use "
          + usableCpus.size() + " " + usableCpus + "; make the sizes sum to at most " + usableCpus.size());
    }
    List<SlotAssignment> out = new ArrayList<>();
    for (ModelEntry model : index.models().values()) {
      for (VersionEntry version : model.versions().values()) {
        String base = model.name() + "-" + version.version();
        if (sizes.isEmpty()) {
          out.add(assignment(defaults.host(), base, model, version, List.of(), defaults.threads(), gpu));
        } else {
          int next = 0;
          for (int i = 0; i < sizes.size(); i++) {
            List<Integer> cpus = usableCpus.subList(next, next + sizes.get(i));
            next += sizes.get(i);
            out.add(assignment(defaults.host(), base + "-" + i, model, version, cpus, sizes.get(i), -1));
          }
        }
      }
    }
    return out;
  }

  private static SlotAssignment assignment(String host, String slot, ModelEntry model, VersionEntry version, List<Integer> cpus, int threads, int gpu) {
    List<AssignedServiceModel> services = new ArrayList<>();
    for (ServiceModelEntry s : model.serviceModels()) {
      services.add(new AssignedServiceModel(s.name(), host + "/" + slot + "/" + s.name(), s.weightFile().map(Assignments::assigned).orElse(null)));
    }
    return SlotAssignment.newBuilder()
        .setHost(host)
        .setSlot(slot)
        .setModel(model.name())
        .setVersion(version.version())
        .setPool(gpu >= 0 ? "gpu" : "cpu")
        .setCpus(List.copyOf(cpus))
        .setGpu(gpu)
        .setProvider(gpu >= 0 ? "CUDA" : "CPU")
        .setThreads(threads)
        .setServiceModels(services)
        .build();
  }

  private static AssignedWeightFile assigned(WeightFile file) {
    return new AssignedWeightFile(file.relativePath(), file.sha256());
  }

  /**
   * Reads a static list of slot assignments from a JSON or YAML file: a list of objects with the
   * fields of {@code SlotAssignment}. Entries for other hosts are skipped; left out, {@code host}
   * is this host, {@code pool} follows {@code gpu}, {@code provider} follows the pool, {@code
   * serviceModels} is every service model of the model, a service model may be given by name
   * alone, its {@code instanceId} defaults to host/slot/service model, and a left-out {@code
   * weightFile} is the repository's ({@code null} means none).
   */
  public static List<SlotAssignment> read(Path file, RepositoryIndex index, String host) {
    String where = "worker.assignments=" + file;
    JsonNode root;
    try {
      String name = file.getFileName().toString().toLowerCase(Locale.ROOT);
      ObjectMapper mapper = name.endsWith(".json") ? new ObjectMapper() : new ObjectMapper(new YAMLFactory());
      mapper.enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
      root = mapper.readTree(file.toFile());
    } catch (IOException e) {
      throw new ConfigException(where + ": cannot be read: " + e.getMessage());
    }
    if (root == null || !root.isArray()) {
      throw new ConfigException(where + ": expected a list of slot assignments");
    }
    List<SlotAssignment> out = new ArrayList<>();
    for (int i = 0; i < root.size(); i++) {
      SlotAssignment a = parse(root.get(i), where + " [" + i + "]", index, host);
      if (a.getHost().equals(host)) {
        out.add(a);
      }
    }
    return out;
  }

  private static SlotAssignment parse(JsonNode node, String where, RepositoryIndex index, String host) {
    if (!node.isObject()) {
      throw new ConfigException(where + ": expected an object");
    }
    unknown(node, FIELDS, where);
    String model = text(node, "model", where, null);
    String slot = text(node, "slot", where, null);
    String entryHost = text(node, "host", where, host);
    int gpu = integer(node, "gpu", where, -1);
    String pool = text(node, "pool", where, gpu >= 0 ? "gpu" : "cpu");
    SlotAssignment.Builder b = SlotAssignment.newBuilder()
        .setHost(entryHost)
        .setSlot(slot)
        .setModel(model)
        .setVersion(text(node, "version", where, null))
        .setPool(pool)
        .setCpus(cpus(node.get("cpus"), where + ".cpus"))
        .setGpu(gpu)
        .setProvider(text(node, "provider", where, pool.equals("gpu") ? "CUDA" : "CPU"))
        .setThreads(integer(node, "threads", where, 0))
        .setMaxBatch(integer(node, "maxBatch", where, 0))
        .setMemoryBudgetBytes(node.has("memoryBudgetBytes") ? node.get("memoryBudgetBytes").asLong() : 0)
        .setPlanId(node.hasNonNull("planId") ? node.get("planId").asText() : null)
        .setTimestamp(node.has("timestamp") ? node.get("timestamp").asLong() : 0);
    JsonNode services = node.get("serviceModels");
    List<AssignedServiceModel> list = new ArrayList<>();
    if (services == null) {
      index.model(model).ifPresent(m -> m.serviceModels().forEach(s -> list.add(service(s.name(), null, false, null, entryHost, slot, index))));
    } else if (!services.isArray()) {
      throw new ConfigException(where + ".serviceModels: expected a list");
    } else {
      for (int i = 0; i < services.size(); i++) {
        JsonNode s = services.get(i);
        String at = where + ".serviceModels[" + i + "]";
        if (s.isTextual()) {
          list.add(service(s.asText(), null, false, null, entryHost, slot, index));
          continue;
        }
        if (!s.isObject()) {
          throw new ConfigException(at + ": expected a service model name or an object");
        }
        unknown(s, SERVICE_FIELDS, at);
        JsonNode wf = s.get("weightFile");
        AssignedWeightFile file = null;
        if (wf != null && !wf.isNull()) {
          if (!wf.isObject()) {
            throw new ConfigException(at + ".weightFile: expected {path, sha256} or null");
          }
          unknown(wf, FILE_FIELDS, at + ".weightFile");
          file = new AssignedWeightFile(text(wf, "path", at + ".weightFile", null), text(wf, "sha256", at + ".weightFile", null));
        }
        list.add(service(text(s, "serviceModel", at, null), text(s, "instanceId", at, ""), wf != null, file, entryHost, slot, index));
      }
    }
    return b.setServiceModels(list).build();
  }

  private static AssignedServiceModel service(String name, String instanceId, boolean fileGiven, AssignedWeightFile file,
                                              String host, String slot, RepositoryIndex index) {
    AssignedWeightFile weights = fileGiven ? file
        : index.serviceModel(name).flatMap(ServiceModelEntry::weightFile).map(Assignments::assigned).orElse(null);
    String id = instanceId == null || instanceId.isEmpty() ? host + "/" + slot + "/" + name : instanceId;
    return new AssignedServiceModel(name, id, weights);
  }

  /**
   * Checks assignments against the repository and fills in the defaults.
   *
   * @param source names the origin in error messages (a setting, a file)
   */
  public static List<SlotSpec> resolve(List<SlotAssignment> assignments, RepositoryIndex index, Defaults defaults,
                                       List<Integer> usableCpus, String source) {
    List<SlotSpec> out = new ArrayList<>();
    Set<String> ids = new HashSet<>();
    for (int n = 0; n < assignments.size(); n++) {
      SlotAssignment a = assignments.get(n);
      String where = source + " [" + n + "]";
      name(a.getSlot(), where + ".slot");
      if (!ids.add(a.getSlot())) {
        throw new ConfigException(where + ".slot: '" + a.getSlot() + "' is assigned twice on host " + a.getHost());
      }
      ModelEntry model = index.model(a.getModel()).orElseThrow(() -> new ConfigException(where + ".model: '" + a.getModel()
          + "' is not in the model repository; models: " + index.models().keySet()));
      VersionEntry version = model.version(a.getVersion()).orElseThrow(() -> new ConfigException(where + ".version: model '"
          + a.getModel() + "' has no version '" + a.getVersion() + "'; versions: " + model.versions().keySet()));
      boolean gpuPool = switch (a.getPool().toLowerCase(Locale.ROOT)) {
        case "cpu" -> false;
        case "gpu" -> true;
        default -> throw new ConfigException(where + ".pool: '" + a.getPool() + "' is not a pool; use cpu or gpu");
      };
      String provider = a.getProvider().toUpperCase(Locale.ROOT);
      if (!provider.equals(gpuPool ? "CUDA" : "CPU")) {
        throw new ConfigException(where + ".provider: '" + a.getProvider() + "' does not run the " + a.getPool()
            + " pool; use " + (gpuPool ? "CUDA" : "CPU"));
      }
      if (gpuPool && a.getGpu() < 0) {
        throw new ConfigException(where + ".gpu: a gpu slot needs a device index (0, 1, ...)");
      }
      List<Integer> cpus = a.getCpus();
      if (gpuPool && !cpus.isEmpty()) {
        throw new ConfigException(where + ".cpus: a gpu slot has no CPU partition; leave cpus empty");
      }
      for (int cpu : cpus) {
        if (!usableCpus.contains(cpu)) {
          throw new ConfigException(where + ".cpus: CPU " + cpu + " is not usable by this process; usable: " + usableCpus);
        }
      }
      if (new HashSet<>(cpus).size() != cpus.size()) {
        throw new ConfigException(where + ".cpus: " + cpus + " names a CPU twice");
      }
      int threads = a.getThreads();
      if (!cpus.isEmpty()) {
        if (threads != 0 && threads != cpus.size()) {
          throw new ConfigException(where + ".threads: a partition of " + cpus.size() + " CPUs runs " + cpus.size()
              + " threads, one per CPU (never more busy threads than cores); got " + threads);
        }
        threads = cpus.size();
      } else if (threads == 0) {
        // A CUDA slot is measured with one CPU thread driving the device (SlotConfig.cuda); serve it so.
        threads = gpuPool ? 1 : defaults.threads();
      }
      if (a.getMaxBatch() < 0 || a.getMemoryBudgetBytes() < 0) {
        throw new ConfigException(where + ": maxBatch and memoryBudgetBytes must not be negative");
      }
      int maxRows = RequestCheck.batchable(version) ? (a.getMaxBatch() > 0 ? a.getMaxBatch() : defaults.maxBatch()) : 1;
      long budget = a.getMemoryBudgetBytes() > 0 ? a.getMemoryBudgetBytes() : defaults.budgetBytes();
      List<SlotSpec.Instance> instances = new ArrayList<>();
      Set<String> names = new HashSet<>();
      for (int i = 0; i < a.getServiceModels().size(); i++) {
        AssignedServiceModel s = a.getServiceModels().get(i);
        String at = where + ".serviceModels[" + i + "]";
        name(s.getServiceModel(), at + ".serviceModel");
        if (!names.add(s.getServiceModel())) {
          throw new ConfigException(at + ".serviceModel: '" + s.getServiceModel() + "' is assigned twice to slot " + a.getSlot());
        }
        Optional<ServiceModelEntry> known = index.serviceModel(s.getServiceModel());
        if (known.isPresent() && !known.get().baseModel().equals(model.name())) {
          throw new ConfigException(at + ".serviceModel: '" + s.getServiceModel() + "' is built on model '"
              + known.get().baseModel() + "', not on '" + model.name() + "'");
        }
        AssignedWeightFile wf = s.getWeightFile();
        instances.add(new SlotSpec.Instance(s.getServiceModel(), s.getInstanceId(), wf == null ? null : new WeightFileRef(wf.getPath(), wf.getSha256())));
      }
      SlotConfig session = gpuPool ? new SlotConfig(Provider.CUDA, a.getGpu(), List.of(), threads, false)
          : cpus.isEmpty() ? SlotConfig.unpinned(threads)
          : SlotConfig.pinned(cpus, defaults.spin());
      out.add(new SlotSpec(a.getHost(), a.getSlot(), version, gpuPool ? "gpu" : "cpu", session, maxRows, budget, instances));
    }
    return out;
  }

  private static void name(String value, String where) {
    if (value == null || !NAME.matcher(value).matches()) {
      throw new ConfigException(where + ": '" + value + "' is not a legal name; use letters, digits, '.', '_' or '-'");
    }
  }

  private static void unknown(JsonNode node, Set<String> allowed, String where) {
    for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
      String f = it.next();
      if (!allowed.contains(f)) {
        throw new ConfigException(where + "." + f + ": unknown field; fields are " + new TreeSet<>(allowed));
      }
    }
  }

  private static String text(JsonNode node, String field, String where, String fallback) {
    JsonNode v = node.get(field);
    if (v == null || v.isNull()) {
      if (fallback == null) {
        throw new ConfigException(where + "." + field + ": missing");
      }
      return fallback;
    }
    if (!v.isValueNode()) {
      throw new ConfigException(where + "." + field + ": expected a string");
    }
    return v.asText();
  }

  private static int integer(JsonNode node, String field, String where, int fallback) {
    JsonNode v = node.get(field);
    if (v == null || v.isNull()) {
      return fallback;
    }
    if (!v.canConvertToInt()) {
      throw new ConfigException(where + "." + field + ": expected a whole number, got " + v);
    }
    return v.asInt();
  }

  private static List<Integer> cpus(JsonNode node, String where) {
    if (node == null || node.isNull()) {
      return List.of();
    }
    try {
      if (node.isTextual()) {
        return CpuList.parse(node.asText());
      }
      if (node.isArray()) {
        List<Integer> out = new ArrayList<>();
        for (JsonNode c : node) {
          if (!c.canConvertToInt() || c.asInt() < 0) {
            throw new IllegalArgumentException("'" + c + "' is not a CPU id");
          }
          out.add(c.asInt());
        }
        return out;
      }
    } catch (IllegalArgumentException e) {
      throw new ConfigException(where + ": " + e.getMessage());
    }
    throw new ConfigException(where + ": expected a list of CPU ids or a CPU list such as \"0-3,8\"");
  }

  private static String join(List<Integer> sizes) {
    return String.join(",", sizes.stream().map(String::valueOf).toList());
  }
}
