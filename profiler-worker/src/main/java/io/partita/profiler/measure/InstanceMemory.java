package io.partita.profiler.measure;

import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;
import io.partita.runtime.Provider;
import io.partita.runtime.SessionOpener;
import io.partita.runtime.SlotConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Measures the memory one model instance takes, in a child JVM.
 *
 * <p>The child loads ONNX Runtime, reads its resident set (VmRSS), opens one session configured like
 * the measured partition (same provider and intra-op thread count), creates the input tensors for
 * the batch size, runs three warm-up inferences so the arena has grown to its working size, and
 * reads VmRSS again; the difference is the instance's memory (weights and their prepacked copies,
 * the arena, the inputs and outputs, the pool threads' stacks). It runs in a fresh process because
 * in a long-lived one the allocator reuses memory that earlier sessions freed, so the same
 * measurement in-process reads anything from the right figure to zero. GPU device memory is not in
 * VmRSS and is not counted.
 *
 * <p>Costs a JVM start (about a second) per measurement. Returns -1 when the child fails; the
 * timing of the point is still valid and is kept.
 */
final class InstanceMemory {

  private static final long TIMEOUT_SECONDS = 120;

  private InstanceMemory() {}

  /** Resident bytes one instance adds, or -1 when it could not be measured. */
  static long measure(ModelRef model, SlotConfig slot, int batch, Map<String, Long> dims) {
    Path temp = null;
    try {
      Path file = model.file();
      if (file == null) {
        temp = Files.createTempFile("partita-profile-", ".onnx");
        Files.write(temp, model.bytes());
        file = temp;
      }
      List<String> command = new ArrayList<>(List.of(
          Path.of(System.getProperty("java.home"), "bin", "java").toString(),
          "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
          InstanceMemory.class.getName(),
          file.toString(), slot.provider().name(), String.valueOf(slot.threads()),
          String.valueOf(slot.gpu()), String.valueOf(batch)));
      dims.forEach((k, v) -> command.add(k + "=" + v));
      ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
      // The class path goes through the environment, not -cp: ONNX Runtime 1.29.0's native library
      // crashes the process (SIGSEGV, no hs_err file) while loading when the command line is about
      // 4 KiB long (3.5 KiB passes), and a test or IDE class path easily is.
      builder.environment().put("CLASSPATH", System.getProperty("java.class.path"));
      Process child = builder.start();
      byte[] out = child.getInputStream().readAllBytes();
      if (!child.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
        child.destroyForcibly();
        return -1;
      }
      if (child.exitValue() != 0) {
        return -1;
      }
      return parse(new String(out, StandardCharsets.UTF_8));
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    } finally {
      if (temp != null) {
        try {
          Files.deleteIfExists(temp);
        } catch (IOException ignored) {
          // a leftover temp file is harmless
        }
      }
    }
  }

  static long parse(String output) {
    for (String line : output.split("\n")) {
      if (line.startsWith("instance-memory-bytes=")) {
        return Long.parseLong(line.substring("instance-memory-bytes=".length()).trim());
      }
    }
    return -1;
  }

  /** The child: {@code MODEL PROVIDER THREADS GPU_DEVICE BATCH [NAME=SIZE ...]}. */
  public static void main(String[] args) throws Exception {
    Path model = Path.of(args[0]);
    Provider provider = Provider.valueOf(args[1]);
    int threads = Integer.parseInt(args[2]);
    int device = Integer.parseInt(args[3]);
    int batch = Integer.parseInt(args[4]);
    Map<String, Long> dims = new LinkedHashMap<>();
    for (int i = 5; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      dims.put(args[i].substring(0, eq), Long.parseLong(args[i].substring(eq + 1)));
    }
    // The partition's provider and thread count, unpinned: memory does not depend on the cores.
    SlotConfig slot = new SlotConfig(provider, device, List.of(), threads, false);
    OrtEnvironment env = OrtEnvironment.getEnvironment();
    SessionOpener opener = new SessionOpener(env, SessionOpener.CudaFallback.NONE);
    System.gc();
    long before = ProcessMemory.residentBytes();
    try (OrtSession session = opener.open(model, slot).session();
         Inputs inputs = Inputs.create(env, session.getInputInfo(), batch, dims)) {
      for (int i = 0; i < 3; i++) {
        try (OrtSession.Result ignored = session.run(inputs.tensors())) {
          // warm-up: only the memory it leaves allocated matters
        }
      }
      long after = ProcessMemory.residentBytes();
      System.out.println("instance-memory-bytes=" + (before < 0 || after < 0 ? -1 : Math.max(0, after - before)));
    }
  }
}
