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

  private DemoRepository() {}

  /** Relative path of an adapter file inside the repository ({@code demo-mlp/adapters/a.onnx_adapter}). */
  public static String adapterPath(String adapterId) {
    return DemoMlp.MODEL_NAME + "/adapters/" + adapterId + LoraAdapterFormat.FILE_EXTENSION;
  }

  /**
   * Writes (or completes, or repairs) the demo repository under {@code root}.
   *
   * @return whether any file was written; {@code false} means the repository was already complete
   */
  public static boolean writeTo(Path root) throws IOException {
    Map<String, byte[]> files = contents();
    boolean wrote = false;
    for (Map.Entry<String, byte[]> f : files.entrySet()) {
      wrote |= writeIfDifferent(root.resolve(f.getKey()), f.getValue());
    }
    if (wrote) {
      log.info("Wrote demo model repository under {}", root);
    } else {
      log.debug("Demo model repository under {} is already complete", root);
    }
    return wrote;
  }

  /** Every file of the demo repository, relative path to bytes, the manifest last. */
  static Map<String, byte[]> contents() {
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
    y.append("  \"1\":\n");
    y.append("    precision: fp32\n");
    y.append("    providers: [CPU]\n");
    y.append("    accuracy: 1.0\n");
    y.append("    memoryBytes: ").append(MEMORY_FP32).append('\n');
    y.append("    sha256: \"").append(shas.get(m + "/1/model.onnx")).append("\"\n");
    y.append("  \"2\":\n");
    y.append("    precision: fp16\n");
    y.append("    providers: [CPU]\n");
    y.append("    accuracy: 0.99\n");
    y.append("    memoryBytes: ").append(MEMORY_FP16).append('\n');
    y.append("    sha256: \"").append(shas.get(m + "/2/model.onnx")).append("\"\n");
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
