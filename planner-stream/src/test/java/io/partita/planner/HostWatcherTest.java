package io.partita.planner;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.avro.HostLiveness;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class HostWatcherTest {
  @Test
  void shouldRecordTheHostsThatJoinedAndThoseThatLeftOnly() {
    Map<String, HostLiveness> changes = HostWatcher.changes(Set.of("host-1", "host-2"), Set.of("host-2", "host-3"), 42, "p.workers");

    assertThat(changes).containsOnlyKeys("host-1", "host-3");
    assertThat(changes.get("host-1").getState()).isEqualTo("LEFT");
    assertThat(changes.get("host-3").getState()).isEqualTo("PRESENT");
    assertThat(changes.get("host-3").getTimestamp()).isEqualTo(42);
    assertThat(HostWatcher.changes(Set.of("host-2"), Set.of("host-2"), 43, "p.workers")).isEmpty();
  }
}
