package io.partita.bench;

import com.sun.management.OperatingSystemMXBean;
import com.sun.management.ThreadMXBean;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The CPU time of a measured window split between the parts of a pipeline that all run in this JVM
 * (broker, worker, gateway, load generator), from per-thread CPU time ({@link ThreadMXBean}). A
 * thread whose name says its part (Partita's own threads, the broker's) belongs to it; any other
 * (Kafka clients' network threads) to the part whose start created it ({@link #part} records the
 * threads alive after each start). The JVM's own threads are not Java threads: on Linux their CPU
 * time is read from {@code /proc/self/task/<tid>/schedstat} by thread name, the JIT compilers
 * ({@code C1/C2 CompilerThread}) apart from GC ({@code GC Thread#}, {@code G1 ...}) and the VM
 * thread (safepoints); what is left of the process's CPU time after all of those is native: ONNX
 * Runtime's intra-op pool, mostly. Elsewhere the JIT and GC columns stay 0 and native holds them.
 */
final class CpuSplit {
  static final String JIT = "JIT compiler";
  static final String GC = "GC and VM thread";
  static final String NATIVE = "native (ONNX Runtime pool, other)";
  /** The worker's part; in table 5d also the bare echo's, the side that answers. */
  static final String WORKER = "worker";
  static final List<String> PARTS = List.of("broker", WORKER, "gateway", "load generator", "other Java", JIT, GC, NATIVE);
  private static final Path TASKS = Path.of("/proc/self/task");
  /** Snapshot keys of the JVM's own threads: {@code VM_KEY - tid} (Java thread ids are >= 1, the process is -1). */
  private static final long VM_KEY = -2;

  private static final ThreadMXBean THREADS = ManagementFactory.getPlatformMXBean(ThreadMXBean.class);
  private final Map<Long, String> owner = new HashMap<>();
  /** The part of each JVM thread seen by a snapshot, by its snapshot key (JIT or GC). */
  private final Map<Long, String> vmPart = new ConcurrentHashMap<>();
  private Set<Long> seen = alive();

  CpuSplit() {
    if (THREADS.isThreadCpuTimeSupported() && !THREADS.isThreadCpuTimeEnabled()) {
      THREADS.setThreadCpuTimeEnabled(true);
    }
  }

  /** Says that the threads created since the last call belong to {@code part}. */
  void part(String part) {
    Set<Long> now = alive();
    for (long id : now) {
      if (!seen.contains(id)) {
        owner.putIfAbsent(id, part);
      }
    }
    seen = now;
  }

  /** A thread created after the parts started, by its name. */
  static String byName(String name) {
    if (name.endsWith("| bench-echo") || name.endsWith("| bench-hop")) {
      return WORKER; // the bare echo's and the hop reader's consumer threads (table 5d): the answering side
    }
    if (name.startsWith("bench-load") || name.startsWith("partita-client") || name.contains("| bench")
        || name.startsWith("HttpClient-")) { // the JDK HttpClient's selector and workers: only the bench's load uses it
      return "load generator";
    }
    // the gateway's handler threads, and the gRPC server's Netty loops (the bench's gRPC client has its own)
    if (name.startsWith("partita-handler") || name.startsWith("grpc-default-") || name.startsWith("partita-route-wait")) {
      return "gateway";
    }
    if (name.startsWith("partita-slot") || name.startsWith("partita-worker")) {
      return WORKER;
    }
    if (name.startsWith("partita-gateway") || name.startsWith("vert.x") || name.startsWith("partita-jobs")) {
      return "gateway";
    }
    if (name.startsWith("data-plane") || name.startsWith("kafka-") && !name.startsWith("kafka-producer")
        || name.startsWith("raft") || name.startsWith("quorum") || name.startsWith("broker-") || name.startsWith("controller-")
        || name.startsWith("ExpirationReaper") || name.startsWith("group-coordinator") || name.startsWith("share-coordinator")) {
      return "broker";
    }
    return "other Java";
  }

  /** The part of a Java thread: by its name, else by the start that created it ({@link #part}). */
  private String partOf(long id, String name) {
    String part = byName(name);
    return part.equals("other Java") ? owner.getOrDefault(id, part) : part;
  }

  /** Bytes allocated so far by each live Java thread (HotSpot's per-thread counter; empty where there is none). */
  Map<Long, Long> allocated() {
    Map<Long, Long> out = new HashMap<>();
    if (THREADS.isThreadAllocatedMemorySupported()) {
      long[] ids = THREADS.getAllThreadIds();
      long[] bytes = THREADS.getThreadAllocatedBytes(ids);
      for (int i = 0; i < ids.length; i++) {
        if (bytes[i] >= 0) {
          out.put(ids[i], bytes[i]);
        }
      }
    }
    return out;
  }

  /** Bytes allocated between two {@link #allocated} snapshots, by part (Java threads only), parts as the CPU split's. */
  Map<String, Long> allocatedBetween(Map<Long, Long> before, Map<Long, Long> after) {
    Map<String, Long> byPart = new LinkedHashMap<>();
    PARTS.forEach(p -> byPart.put(p, 0L));
    for (ThreadInfo info : THREADS.getThreadInfo(after.keySet().stream().mapToLong(Long::longValue).toArray())) {
      if (info != null) {
        long id = info.getThreadId();
        byPart.merge(partOf(id, info.getThreadName()), after.get(id) - before.getOrDefault(id, 0L), Long::sum);
      }
    }
    return byPart;
  }

  /** CPU nanoseconds so far, by Java thread, by JVM thread (keys below -1), and the whole process under key -1. */
  Map<Long, Long> snapshot() {
    Map<Long, Long> out = new HashMap<>();
    for (long id : THREADS.getAllThreadIds()) {
      long t = THREADS.getThreadCpuTime(id);
      if (t >= 0) {
        out.put(id, t);
      }
    }
    vmThreads(out);
    out.put(-1L, processCpuNanos());
    return out;
  }

  /** Adds the CPU time of the JIT compiler and GC threads (Linux; nothing where /proc is missing). */
  private void vmThreads(Map<Long, Long> out) {
    if (!Files.isDirectory(TASKS)) {
      return;
    }
    try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
      for (Path task : tasks) {
        try {
          String part = vmPartOf(Files.readString(task.resolve("comm")).strip());
          if (part == null) {
            continue;
          }
          String stat = Files.readString(task.resolve("schedstat"));
          long key = VM_KEY - Long.parseLong(task.getFileName().toString());
          out.put(key, Long.parseLong(stat.substring(0, stat.indexOf(' '))));
          vmPart.put(key, part);
        } catch (IOException | RuntimeException e) {
          // the thread ended while being read (a C2 compiler thread may): its time is left out
        }
      }
    } catch (IOException e) {
      // no thread list: the JIT and GC columns stay 0
    }
  }

  /** JIT or GC for a JVM thread's name (Linux cuts names at 15 characters), or null for any other thread. */
  static String vmPartOf(String comm) {
    if (comm.startsWith("C1 CompilerThre") || comm.startsWith("C2 CompilerThre") || comm.startsWith("Sweeper thread")) {
      return JIT;
    }
    if (comm.startsWith("GC Thread#") || comm.startsWith("G1 ") || comm.equals("VM Thread")) {
      return GC;
    }
    return null;
  }

  /** The CPU time between two snapshots, as a share of each part (parts in {@link #PARTS} order) and the cores used. */
  Split between(Map<Long, Long> before, Map<Long, Long> after, double seconds) {
    Map<String, Long> byPart = new LinkedHashMap<>();
    PARTS.forEach(p -> byPart.put(p, 0L));
    Map<Long, String> names = new HashMap<>();
    for (ThreadInfo info : THREADS.getThreadInfo(after.keySet().stream().filter(id -> id >= 0).mapToLong(Long::longValue).toArray())) {
      if (info != null) {
        names.put(info.getThreadId(), info.getThreadName());
      }
    }
    long java = 0;
    long vm = 0;
    for (Map.Entry<Long, Long> e : after.entrySet()) {
      if (e.getKey() <= VM_KEY) {
        long used = Math.max(0, e.getValue() - before.getOrDefault(e.getKey(), 0L));
        vm += used;
        byPart.merge(vmPart.getOrDefault(e.getKey(), NATIVE), used, Long::sum);
        continue;
      }
      if (e.getKey() < 0) {
        continue;
      }
      long used = e.getValue() - before.getOrDefault(e.getKey(), 0L);
      java += used;
      byPart.merge(partOf(e.getKey(), names.getOrDefault(e.getKey(), "")), used, Long::sum);
    }
    long process = after.get(-1L) - before.get(-1L);
    byPart.merge(NATIVE, Math.max(0, process - java - vm), Long::sum);
    long total = Math.max(process, java + vm);
    double[] shares = new double[PARTS.size()];
    for (int i = 0; i < shares.length; i++) {
      shares[i] = total == 0 ? Double.NaN : byPart.get(PARTS.get(i)) / (double) total;
    }
    return new Split(shares, total / 1e9 / seconds);
  }

  /**
   * @param shares each part's share of the process's CPU time, {@link #PARTS} order
   * @param coresBusy CPU seconds per second of the window (2.0: two cores busy throughout)
   */
  record Split(double[] shares, double coresBusy) {
    /** Each part's share in percent, formatted, {@link #PARTS} order: a table's CPU columns. */
    List<String> percentCells() {
      List<String> cells = new ArrayList<>(shares.length);
      for (double share : shares) {
        cells.add(Report.fmt(share * 100));
      }
      return cells;
    }

    /** CPU microseconds one part spent per call, at {@code callsPerSecond} over the window. */
    double microsPerCall(String part, double callsPerSecond) {
      return coresBusy * 1e6 / callsPerSecond * shares[PARTS.indexOf(part)];
    }
  }

  private static Set<Long> alive() {
    Set<Long> ids = new HashSet<>();
    for (long id : THREADS.getAllThreadIds()) {
      ids.add(id);
    }
    return ids;
  }

  private static long processCpuNanos() {
    if (ManagementFactory.getOperatingSystemMXBean() instanceof OperatingSystemMXBean os) {
      return os.getProcessCpuTime();
    }
    return -1;
  }
}
