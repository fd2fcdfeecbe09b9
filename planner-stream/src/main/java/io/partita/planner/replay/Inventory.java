package io.partita.planner.replay;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.partita.avro.Gpu;
import io.partita.avro.HostEnvironment;
import io.partita.avro.SlotStatus;
import io.partita.avro.TimingEvent;
import io.partita.common.Topic;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A what-if inventory: hosts to add (like a recorded host, with changes), change or remove before
 * a replay plans. In YAML:
 *
 * <pre>
 * hosts:
 *   - id: host-b          # a new host ...
 *     like: host-a        # ... with host-a's environment and timing events (their host renamed)
 *     gpus: 2             # changes: GPU count (copies of the source's first GPU), usable cores, memory
 *     cores: 16
 *     memoryBytes: 68719476736
 *   - id: host-a          # a recorded host without "like": change its environment
 *     cores: 8
 *   - id: host-c
 *     remove: true        # drop its environment, timing events and slot status
 * </pre>
 *
 * A copied host's timing events keep their figures: the planner then plans the new host as if it
 * had measured exactly what the source did (only measured sizes that fit its pools are used).
 */
public record Inventory(List<HostChange> hosts) {
  public Inventory {
    hosts = hosts == null ? List.of() : List.copyOf(hosts);
  }

  /** One host of the inventory. */
  public record HostChange(String id, String like, Integer cores, Integer gpus, Long memoryBytes, boolean remove) {}

  public static Inventory read(Path file) {
    ObjectMapper yaml = new ObjectMapper(new YAMLFactory()).configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, true);
    try {
      Inventory inventory = yaml.readValue(file.toFile(), Inventory.class);
      for (int i = 0; i < inventory.hosts().size(); i++) {
        HostChange h = inventory.hosts().get(i);
        if (h.id() == null || h.id().isBlank()) {
          throw new IllegalArgumentException("inventory " + file + ": hosts[" + i + "].id: missing");
        }
        if (h.remove() && (h.like() != null || h.cores() != null || h.gpus() != null || h.memoryBytes() != null)) {
          throw new IllegalArgumentException("inventory " + file + ": hosts[" + i + "]: remove: true takes no other field");
        }
        if ((h.cores() != null && h.cores() < 0) || (h.gpus() != null && h.gpus() < 0)
            || (h.memoryBytes() != null && h.memoryBytes() < 0)) {
          throw new IllegalArgumentException("inventory " + file + ": hosts[" + i + "]: cores, gpus and memoryBytes must be >= 0");
        }
      }
      return inventory;
    } catch (IOException e) {
      throw new IllegalArgumentException("inventory " + file + " cannot be read: " + e.getMessage(), e);
    }
  }

  /** The recorded input with this inventory applied. */
  public List<Recorded> apply(List<Recorded> recorded, Topics topics, Codecs codecs) {
    Topic<HostEnvironment> envs = topics.hostEnvironments(codecs);
    Topic<TimingEvent> timings = topics.profileTimings(codecs);
    Topic<SlotStatus> statuses = topics.workerStatus(codecs);
    Map<String, HostEnvironment> lastEnv = new TreeMap<>();
    for (Recorded r : recorded) {
      if (r.topic().equals(envs.name()) && r.value() != null) {
        HostEnvironment env = decodeOrNull(envs, r);
        if (env != null) {
          lastEnv.put(env.getHostId(), env);
        }
      }
    }
    List<Recorded> out = new ArrayList<>(recorded);
    for (int i = 0; i < hosts.size(); i++) {
      HostChange h = hosts.get(i);
      if (h.remove()) {
        out.removeIf(r -> hostOf(r, envs, timings, statuses).equals(h.id()));
        continue;
      }
      String source = h.like() != null ? h.like() : h.id();
      HostEnvironment template = lastEnv.get(source);
      if (template == null) {
        throw new IllegalArgumentException("inventory hosts[" + i + "]." + (h.like() != null ? "like" : "id") + ": host '"
            + source + "' has no recorded environment in the replayed range; known hosts: " + lastEnv.keySet());
      }
      List<Recorded> added = new ArrayList<>();
      for (Recorded r : out) {
        if (h.like() == null || r.value() == null) {
          continue;
        }
        if (r.topic().equals(timings.name())) {
          TimingEvent e = decodeOrNull(timings, r);
          if (e != null && e.getHost().equals(source)) {
            TimingEvent copy = TimingEvent.newBuilder(e).setHost(h.id()).build();
            added.add(new Recorded(r.topic(), r.partition(), r.offset(), r.timestamp(), r.key(),
                timings.encode(copy)));
          }
        }
      }
      out.addAll(added);
      HostEnvironment changed = change(template, h);
      Recorded last = out.stream().filter(r -> r.topic().equals(envs.name())).reduce((a, b) -> b).orElse(null);
      long ts = last == null ? 0 : last.timestamp();
      out.add(new Recorded(envs.name(), 0, Long.MAX_VALUE - hosts.size() + i, ts, h.id(), envs.encode(changed)));
    }
    return out;
  }

  private static HostEnvironment change(HostEnvironment template, HostChange h) {
    HostEnvironment.Builder b = HostEnvironment.newBuilder(template).setHostId(h.id());
    if (h.cores() != null) {
      b.setUsableCores(h.cores()).setLogicalCores(Math.max(h.cores(), template.getLogicalCores()))
          .setPhysicalCores(Math.max(h.cores(), template.getPhysicalCores())).setUsableCpuIds(List.of())
          .setCpuQuotaCores(null);
    }
    if (h.gpus() != null) {
      if (h.gpus() > 0 && template.getGpus().isEmpty()) {
        throw new IllegalArgumentException("inventory host " + h.id() + ".gpus: the source host "
            + template.getHostId() + " has no GPU to copy");
      }
      List<Gpu> gpus = new ArrayList<>();
      for (int g = 0; g < h.gpus(); g++) {
        Gpu first = template.getGpus().get(0);
        gpus.add(Gpu.newBuilder(first).setIndex(g).build());
      }
      b.setGpus(gpus);
    }
    if (h.memoryBytes() != null) {
      b.setMemoryBytes(h.memoryBytes()).setMemoryLimitBytes(null);
    }
    return b.build();
  }

  private static String hostOf(Recorded r, Topic<HostEnvironment> envs, Topic<TimingEvent> timings,
      Topic<SlotStatus> statuses) {
    if (r.topic().equals(envs.name())) {
      return String.valueOf(r.key());
    }
    if (r.topic().equals(timings.name())) {
      TimingEvent e = decodeOrNull(timings, r);
      return e == null ? "" : e.getHost();
    }
    if (r.topic().equals(statuses.name())) {
      SlotStatus s = decodeOrNull(statuses, r);
      return s == null ? "" : s.getHost();
    }
    return "";
  }

  private static <T> T decodeOrNull(Topic<T> topic, Recorded r) {
    try {
      return r.value() == null ? null : topic.decode(r.value());
    } catch (RuntimeException e) {
      return null; // a poison record stays as it is; the planner dead-letters it
    }
  }
}
