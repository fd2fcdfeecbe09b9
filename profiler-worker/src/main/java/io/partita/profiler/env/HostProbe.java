package io.partita.profiler.env;

import io.partita.runtime.Cgroups;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalLong;

/**
 * Reads the host's environment from /proc, the cgroup file system ({@link Cgroups}) and nvidia-smi.
 *
 * <p>All files are read under a root directory ({@code /} live, a fixture directory in tests) and
 * nvidia-smi runs through a {@link CommandRunner}, so every parser is exercised on recorded files.
 * A missing cgroup file means no limit; a missing nvidia-smi means no GPUs.
 */
public final class HostProbe {

  private static final Duration NVIDIA_SMI_TIMEOUT = Duration.ofSeconds(10);

  private final Path root;
  private final CommandRunner commands;
  private final Cgroups cgroups;

  public HostProbe(Path root, CommandRunner commands) {
    this.root = root;
    this.cgroups = new Cgroups(root);
    this.commands = commands;
  }

  /** The live host. */
  public static HostProbe live() {
    return new HostProbe(Path.of("/"), CommandRunner.processes());
  }

  /** Probes everything except ONNX Runtime, whose facts are passed in (see {@link ProviderProbe}). */
  public ProbedHost probe(String hostId, OrtInfo ort) {
    CpuInfo cpu = CpuInfo.parse(read("proc/cpuinfo").orElseThrow(() -> missing("proc/cpuinfo")));
    List<Integer> allowed = read("proc/self/status").map(ProcFiles::allowedCpus)
        .orElseGet(() -> sequence(cpu.logicalCores()));
    OptionalDouble quota = cgroups.cpuQuota();
    List<Integer> usable = ProcFiles.usableCpus(allowed, quota);
    long memory = read("proc/meminfo").map(t -> ProcFiles.kibField(t, "MemTotal"))
        .orElse(OptionalLong.empty())
        .orElseThrow(() -> new IllegalStateException("no MemTotal in " + root.resolve("proc/meminfo")));
    OptionalLong memoryLimit = memoryLimit(memory);
    List<Gpu> gpus = commands.run(Gpu.NVIDIA_SMI_QUERY, NVIDIA_SMI_TIMEOUT).map(Gpu::parseNvidiaSmi).orElse(List.of());
    return new ProbedHost(
        hostId,
        cpu.model(),
        cpu.flags(),
        cpu.logicalCores(),
        cpu.physicalCores(),
        usable.size(),
        usable,
        quota.isPresent() ? quota.getAsDouble() : null,
        memory,
        memoryLimit.isPresent() ? memoryLimit.getAsLong() : null,
        gpus,
        ort.version(),
        ort.providers(),
        System.getProperty("os.name"),
        System.getProperty("os.version"),
        System.getProperty("os.arch"),
        Runtime.version().toString(),
        null);
  }

  /** The machine's host name: /proc/sys/kernel/hostname, else what Java resolves, else "localhost". */
  public String hostname() {
    Optional<String> fromProc = read("proc/sys/kernel/hostname").map(String::strip).filter(s -> !s.isEmpty());
    if (fromProc.isPresent()) {
      return fromProc.get();
    }
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      return "localhost";
    }
  }

  OptionalLong memoryLimit(long machineMemory) {
    Optional<String> max = cgroups.value("", "memory.max");
    if (max.isPresent()) {
      return ProcFiles.memoryLimit(max.get(), machineMemory);
    }
    return cgroups.value("memory", "memory.limit_in_bytes")
        .map(limit -> ProcFiles.memoryLimit(limit, machineMemory))
        .orElse(OptionalLong.empty());
  }

  private Optional<String> read(String relative) {
    Path file = root.resolve(relative);
    try {
      return Files.isRegularFile(file) ? Optional.of(Files.readString(file, StandardCharsets.UTF_8)) : Optional.empty();
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  private IllegalStateException missing(String relative) {
    return new IllegalStateException("cannot read " + root.resolve(relative));
  }

  private static List<Integer> sequence(int n) {
    List<Integer> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(i);
    }
    return out;
  }
}
