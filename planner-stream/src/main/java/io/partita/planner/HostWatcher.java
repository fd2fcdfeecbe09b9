package io.partita.planner;

import io.partita.avro.HostLiveness;
import io.partita.common.Topic;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.planner.plan.HostStates;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches the workers' request consumer group ({@code <prefix>.workers}) and records, on
 * {@code <prefix>.hosts.liveness}, when a host's worker joins it ({@code PRESENT}) and when it is
 * no longer in it ({@code LEFT}): stopped (it leaves at once), or killed, frozen or cut off past the
 * group's session timeout. The planner withdraws a LEFT host's plans, so its instances move, and
 * plans it again once it is PRESENT ({@link HostStates}). A member names its host by its client id
 * ({@link Topics#workerClientId}).
 *
 * <p>It writes a change only, so an unchanged group costs one describe call per interval. Every
 * planner process runs one; two write the same records. Hosts that left while no watcher ran are
 * not marked: the first look only records who is there.
 */
final class HostWatcher implements Runnable, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(HostWatcher.class);

  private final Admin admin;
  private final Producer<String, byte[]> producer;
  private final Topic<HostLiveness> liveness;
  private final String group;
  private final long intervalMs;
  private final Set<String> present = new TreeSet<>();
  private volatile boolean running = true;
  private Thread thread;

  HostWatcher(Admin admin, Producer<String, byte[]> producer, Topics topics, Codecs codecs,
      long intervalMs) {
    this.admin = admin;
    this.producer = producer;
    this.liveness = topics.hostLiveness(codecs);
    this.group = topics.workersGroup();
    this.intervalMs = intervalMs;
  }

  void start() {
    thread = new Thread(this, "partita-planner-host-watcher");
    thread.setDaemon(true);
    thread.start();
  }

  @Override
  public void run() {
    while (running) {
      try {
        look();
      } catch (RuntimeException e) {
        log.debug("Looking at the group {} failed ({}); trying again", group, e.toString());
      }
      try {
        TimeUnit.MILLISECONDS.sleep(intervalMs);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /** One look at the group: records the hosts that joined and those that left since the last look. */
  void look() {
    Set<String> now;
    try {
      ConsumerGroupDescription description = admin.describeConsumerGroups(Set.of(group)).all()
          .get(10, TimeUnit.SECONDS).get(group);
      now = hosts(description.members());
    } catch (ExecutionException e) {
      if (e.getCause() instanceof GroupIdNotFoundException) {
        now = Set.of();
      } else {
        throw new IllegalStateException("describing the group " + group + " failed: " + e.getCause(), e.getCause());
      }
    } catch (TimeoutException e) {
      throw new IllegalStateException("describing the group " + group + " timed out", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return;
    }
    Map<String, HostLiveness> changes = changes(present, now, System.currentTimeMillis(), group);
    changes.forEach((host, record) -> {
      producer.send(liveness.record(host, record));
      log.info("Host {} is {} the workers' group {}: {}", host, record.getState().equals(HostStates.PRESENT) ? "in" : "no longer in",
          group, record.getState().equals(HostStates.PRESENT) ? "the planner plans it" : "the planner moves its instances");
    });
    if (!changes.isEmpty()) {
      producer.flush();
    }
    present.clear();
    present.addAll(now);
  }

  /** The hosts of the group's members (members whose client id names no host are not workers). */
  static Set<String> hosts(Collection<MemberDescription> members) {
    Set<String> out = new TreeSet<>();
    for (MemberDescription m : members) {
      String host = Topics.hostOfWorkerClient(m.clientId());
      if (host != null) {
        out.add(host);
      }
    }
    return out;
  }

  /** The records to write when the group's hosts go from {@code before} to {@code now}. Pure. */
  static Map<String, HostLiveness> changes(Set<String> before, Set<String> now, long timestamp, String group) {
    Map<String, HostLiveness> out = new TreeMap<>();
    for (String host : now) {
      if (!before.contains(host)) {
        out.put(host, new HostLiveness(host, HostStates.PRESENT, "its worker is a member of " + group, timestamp));
      }
    }
    for (String host : before) {
      if (!now.contains(host)) {
        out.put(host, new HostLiveness(host, HostStates.LEFT, "its worker is no longer a member of " + group
            + " (stopped, or gone past the group's session timeout)", timestamp));
      }
    }
    return out;
  }

  @Override
  public void close() {
    running = false;
    if (thread != null) {
      thread.interrupt();
      try {
        thread.join(Duration.ofSeconds(5).toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
