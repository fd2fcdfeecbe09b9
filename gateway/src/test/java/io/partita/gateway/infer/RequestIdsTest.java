package io.partita.gateway.infer;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class RequestIdsTest {

  @Test
  void shouldKeepACallersUsableId() {
    assertThat(RequestIds.orNew("order-42/retry#1")).isEqualTo("order-42/retry#1");
    assertThat(RequestIds.orNew("x".repeat(128))).isEqualTo("x".repeat(128));
  }

  @Test
  void shouldReplaceAnIdThatIsMissingTooLongOrNotVisibleAscii() {
    for (String bad : new String[] {null, "", "   ", "x".repeat(129), "has space", "tab\there", "caf\u00e9", "line\nbreak"}) {
      String id = RequestIds.orNew(bad);
      assertThat(id).as("for %s", bad).isNotEqualTo(bad);
      assertThat(RequestIds.usable(id)).as("new id %s", id).isTrue();
    }
  }

  @Test
  void shouldGiveEveryCallANewIdOfItsOwn() {
    Set<String> ids = new HashSet<>();
    for (int i = 0; i < 10_000; i++) {
      ids.add(RequestIds.orNew(null));
    }
    assertThat(ids).hasSize(10_000);
  }
}
