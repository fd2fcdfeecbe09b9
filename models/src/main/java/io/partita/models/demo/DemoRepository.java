package io.partita.models.demo;

import io.partita.models.lora.LoraAdapterFormat;
import io.partita.models.lora.LoraAdapterWriter;
import io.partita.models.repo.ModelRepository;
import io.partita.models.repo.Sha256;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the demo model repository, built in Java (nothing is downloaded):
 *
 * <pre>
 * &lt;root&gt;/demo-mlp/model.yaml
 * &lt;root&gt;/demo-mlp/1/model.onnx                 fp32
 * &lt;root&gt;/demo-mlp/2/model.onnx                 fp16-stored weights
 * &lt;root&gt;/demo-mlp/adapters/a.onnx_adapter      service model demo-a (b, c likewise)
 * </pre>
 *
 * Service models: {@code demo} (no adapter), {@code demo-a}, {@code demo-b}, {@code demo-c}.
 *
 * <p>The {@link DemoSet#CLUSTER} set adds {@link DemoHeavy}:
 *
 * <pre>
 * &lt;root&gt;/demo-heavy/model.yaml               service model demo-heavy, objective accuracy
 * &lt;root&gt;/demo-heavy/1/model.onnx               hidden 1024, accuracy 0.95
 * &lt;root&gt;/demo-heavy/2/model.onnx               pruned to hidden 256, accuracy 0.90
 * </pre>
 *
 * <p>Guarantees: the content is the same on every run and machine (fixed seeds, deterministic
 * serialization), so the manifest's sha256s never change. {@link #writeTo} is idempotent: a file
 * whose bytes are already right is left alone (not even its modification time changes), a missing
 * or different one is replaced atomically (temporary sibling, then rename), the manifest last.
 * Other models under the root are not touched.
 */
public final class DemoRepository {

  private static final Logger log = LoggerFactory.getLogger(DemoRepository.class);

  /** Declared per-instance memory of the versions, in bytes (small: the model is tiny). */
  static final long MEMORY_FP32 = 4L << 20;
  static final long MEMORY_FP16 = 3L << 20;
  /** Declared per-instance memory of demo-heavy's versions: twice the weights (ONNX Runtime's prepacked copy) and headroom. */
  static final long MEMORY_HEAVY_WIDE = 24L << 20;
  static final long MEMORY_HEAVY_PRUNED = 8L << 20;
  /**
   * demo-heavy's latency objective, between what version 1 takes on 60 % of a core (2.6 ms on a
   * whole core of the development machine, so about 4.3 ms) and on 20 % (about 13 ms): a host with
   * the larger share runs version 1, one with the smaller runs version 2 (about 0.17 ms on a core).
   * 8 ms is about three times version 1's time on a core, the geometric middle of the two shares'
   * 1.7 and 5 times, so the split holds on a machine up to about 1.7 times faster or slower than
   * the one measured. The models documentation has the measured figures.
   */
  public static final double HEAVY_LATENCY_OBJECTIVE_MS = 8.0;

  private DemoRepository() {}

  /** Relative path of an adapter file inside the repository ({@code demo-mlp/adapters/a.onnx_adapter}). */
  public static String adapterPath(String adapterId) {
    return DemoMlp.MODEL_NAME + "/adapters/" + adapterId + LoraAdapterFormat.FILE_EXTENSION;
  }

  /**
   * Writes (or completes, or repairs) the demo repository of {@code partita local} ({@link
   * DemoSet#LOCAL}) under {@code root}.
   *
   * @return whether any file was written; {@code false} means the repository was already complete
   */
  public static boolean writeTo(Path root) throws IOException {
    return writeTo(root, DemoSet.LOCAL);
  }

  /**
   * Writes (or completes, or repairs) the demo models of {@code set} under {@code root}.
   *
   * @return whether any file was written; {@code false} means the repository was already complete
   */
  public static boolean writeTo(Path root, DemoSet set) throws IOException {
    return writeTo(root, set, HEAVY_LATENCY_OBJECTIVE_MS);
  }

  /**
   * As {@link #writeTo(Path, DemoSet)}, with demo-heavy's latency objective set to {@code
   * heavyLatencyObjectiveMs} instead of {@value #HEAVY_LATENCY_OBJECTIVE_MS} ms: where the split
   * between hosts that run version 1 and hosts that run version 2 falls depends on the machine, so
   * a cluster can place it between its hosts' figures (about 3 times version 1's time on a whole
   * core puts it between 60 % and 20 % of a core). The LOCAL set has no demo-heavy and ignores it.
   *
   * @throws IllegalArgumentException when the objective is not a finite number > 0
   */
  public static boolean writeTo(Path root, DemoSet set, double heavyLatencyObjectiveMs) throws IOException {
    Map<String, byte[]> files = contents(set, heavyLatencyObjectiveMs);
    boolean wrote = false;
    for (Map.Entry<String, byte[]> f : files.entrySet()) {
      wrote |= writeIfDifferent(root.resolve(f.getKey()), f.getValue());
    }
    if (wrote) {
      log.info("Wrote demo model repository ({}) under {}", set, root);
    } else {
      log.debug("Demo model repository ({}) under {} is already complete", set, root);
    }
    return wrote;
  }

  /**
   * Writes a demo set from the command line, e.g. to profile it with {@code partita profile}:
   * {@code java -cp 'launcher/target/lib/*' io.partita.models.demo.DemoRepository DIR [local|cluster [MS]]}.
   */
  public static void main(String[] args) throws IOException {
    if (args.length < 1 || args.length > 3) {
      System.err.println("usage: DemoRepository DIR [local|cluster [HEAVY_LATENCY_OBJECTIVE_MS]]");
      System.exit(2);
    }
    DemoSet set = args.length >= 2 ? DemoSet.parse(args[1]) : DemoSet.LOCAL;
    double objective = args.length == 3 ? Double.parseDouble(args[2]) : HEAVY_LATENCY_OBJECTIVE_MS;
    boolean wrote = writeTo(Path.of(args[0]), set, objective);
    System.out.println((wrote ? "wrote " : "already complete: ") + set.models() + " under " + args[0]);
  }

  /** Every file of the {@code partita local} demo repository, relative path to bytes, the manifest last. */
  static Map<String, byte[]> contents() {
    return contents(DemoSet.LOCAL);
  }

  /** Every file of a demo set, relative path to bytes, each model's manifest after its files. */
  static Map<String, byte[]> contents(DemoSet set) {
    return contents(set, HEAVY_LATENCY_OBJECTIVE_MS);
  }

  static Map<String, byte[]> contents(DemoSet set, double heavyLatencyObjectiveMs) {
    if (!(heavyLatencyObjectiveMs > 0) || Double.isInfinite(heavyLatencyObjectiveMs)) {
      throw new IllegalArgumentException("heavyLatencyObjectiveMs: must be a finite number of milliseconds > 0, was "
          + heavyLatencyObjectiveMs);
    }
    Map<String, byte[]> files = new LinkedHashMap<>(demoMlp());
    if (set.models().contains(DemoHeavy.MODEL_NAME)) {
      files.putAll(demoHeavy(heavyLatencyObjectiveMs));
    }
    return files;
  }

  private static Map<String, byte[]> demoHeavy(double latencyObjectiveMs) {
    Map<String, byte[]> files = new LinkedHashMap<>();
    Map<String, String> shas = new LinkedHashMap<>();
    for (String v : DemoHeavy.VERSIONS) {
      String rel = DemoHeavy.MODEL_NAME + "/" + v + "/" + ModelRepository.MODEL_FILE;
      byte[] bytes = DemoHeavy.modelBytes(v);
      files.put(rel, bytes);
      shas.put(v, Sha256.of(bytes));
    }
    String m = DemoHeavy.MODEL_NAME;
    StringBuilder y = new StringBuilder();
    y.append("# Written by io.partita.models.demo.DemoRepository; rewritten if it differs.\n");
    y.append("description: Heavy demo model, tokens [N,64,128] -> scores [N,16]; version 2 is version 1")
        .append(" pruned to a quarter of its hidden units (about a twelfth of the work)\n");
    y.append("versions:\n");
    version(y, DemoHeavy.VERSION_WIDE, "fp32", DemoHeavy.ACCURACY_WIDE, MEMORY_HEAVY_WIDE, shas.get(DemoHeavy.VERSION_WIDE));
    version(y, DemoHeavy.VERSION_PRUNED, "fp32", DemoHeavy.ACCURACY_PRUNED, MEMORY_HEAVY_PRUNED,
        shas.get(DemoHeavy.VERSION_PRUNED));
    y.append("serviceModels:\n");
    y.append("  ").append(m).append(":\n");
    y.append("    objective: accuracy\n");
    y.append("    latencyObjectiveMs: ").append(latencyObjectiveMs).append('\n');
    files.put(m + "/model.yaml", y.toString().getBytes(StandardCharsets.UTF_8));
    return files;
  }

  private static void version(StringBuilder y, String id, String precision, double accuracy, long memory, String sha) {
    y.append("  \"").append(id).append("\":\n");
    y.append("    precision: ").append(precision).append('\n');
    y.append("    providers: [CPU]\n");
    y.append("    accuracy: ").append(accuracy).append('\n');
    y.append("    memoryBytes: ").append(memory).append('\n');
    y.append("    sha256: \"").append(sha).append("\"\n");
  }

  private static Map<String, byte[]> demoMlp() {
    Map<String, byte[]> files = new LinkedHashMap<>();
    Map<String, String> shas = new LinkedHashMap<>();
    for (String v : DemoMlp.VERSIONS) {
      String rel = DemoMlp.MODEL_NAME + "/" + v + "/" + ModelRepository.MODEL_FILE;
      byte[] bytes = DemoMlp.modelBytes(v);
      files.put(rel, bytes);
      shas.put(rel, Sha256.of(bytes));
    }
    for (String a : DemoMlp.ADAPTERS) {
      String rel = adapterPath(a);
      byte[] bytes = LoraAdapterWriter.toBytes(DemoMlp.adapter(a));
      files.put(rel, bytes);
      shas.put(rel, Sha256.of(bytes));
    }
    files.put(DemoMlp.MODEL_NAME + "/model.yaml", manifest(shas).getBytes(StandardCharsets.UTF_8));
    return files;
  }

  private static String manifest(Map<String, String> shas) {
    String m = DemoMlp.MODEL_NAME;
    StringBuilder y = new StringBuilder();
    y.append("# Written by io.partita.models.demo.DemoRepository; rewritten if it differs.\n");
    y.append("description: Demo MLP, input [N,8] -> output [N,4], LoRA rank 2 on the first layer\n");
    y.append("versions:\n");
    version(y, DemoMlp.VERSION_FP32, "fp32", 1.0, MEMORY_FP32, shas.get(m + "/1/model.onnx"));
    version(y, DemoMlp.VERSION_FP16, "fp16", 0.99, MEMORY_FP16, shas.get(m + "/2/model.onnx"));
    y.append("serviceModels:\n");
    y.append("  ").append(DemoMlp.BASE_SERVICE_MODEL).append(": {}\n");
    for (String a : DemoMlp.ADAPTERS) {
      y.append("  ").append(DemoMlp.serviceModelFor(a)).append(":\n");
      y.append("    weightFile: ").append(adapterPath(a)).append('\n');
      y.append("    sha256: \"").append(shas.get(adapterPath(a))).append("\"\n");
    }
    return y.toString();
  }

  private static boolean writeIfDifferent(Path file, byte[] bytes) throws IOException {
    if (Files.isRegularFile(file)
        && Files.size(file) == bytes.length
        && Arrays.equals(Files.readAllBytes(file), bytes)) {
      return false;
    }
    Path dir = file.toAbsolutePath().getParent();
    Files.createDirectories(dir);
    Path tmp = Files.createTempFile(dir, "." + file.getFileName(), ".tmp");
    try {
      Files.write(tmp, bytes);
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } finally {
      Files.deleteIfExists(tmp);
    }
    return true;
  }
}
