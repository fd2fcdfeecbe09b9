package io.partita.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import ai.onnxruntime.OrtSession;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SessionSettingsTest {

  @Test
  void shouldPinAndSpinAPinnedPartition() {
    SessionSettings s = SessionSettings.of(SlotConfig.pinned(List.of(2, 3, 4), true));
    assertThat(s.intraOpThreads()).isEqualTo(3);
    assertThat(s.interOpThreads()).isEqualTo(1);
    assertThat(s.executionMode()).isEqualTo(OrtSession.SessionOptions.ExecutionMode.SEQUENTIAL);
    assertThat(s.configEntries()).containsExactlyInAnyOrderEntriesOf(Map.of(
        SessionSettings.INTRA_OP_SPINNING, "1",
        SessionSettings.INTER_OP_SPINNING, "0",
        SessionSettings.INTRA_OP_AFFINITIES, "4;5"));
  }

  @Test
  void shouldNeverSpinUnpinnedThreads() {
    SessionSettings s = SessionSettings.of(SlotConfig.unpinned(0));
    assertThat(s.intraOpThreads()).isZero();
    assertThat(s.configEntries()).containsExactlyInAnyOrderEntriesOf(Map.of(
        SessionSettings.INTRA_OP_SPINNING, "0",
        SessionSettings.INTER_OP_SPINNING, "0"));
    assertThat(SessionSettings.of(SlotConfig.pinned(List.of(0), false)).configEntries())
        .containsEntry(SessionSettings.INTRA_OP_SPINNING, "0");
  }

  @Test
  void shouldPutEveryConfigEntryIntoTheRealSessionOptions() throws Exception {
    SessionSettings s = SessionSettings.of(SlotConfig.pinned(List.of(0, 1), true));
    try (OrtSession.SessionOptions options = s.toOptions()) {
      assertThat(options.getConfigEntries()).isEqualTo(s.configEntries());
    }
  }

  @Test
  void shouldGiveEqualSettingsForEqualSlots() {
    assertThat(SessionSettings.of(SlotConfig.pinned(List.of(0, 1), true)))
        .isEqualTo(SessionSettings.of(new SlotConfig(Provider.CPU, -1, List.of(0, 1), 2, true)))
        .isNotEqualTo(SessionSettings.of(SlotConfig.pinned(List.of(0, 1), false)))
        .isNotEqualTo(SessionSettings.of(SlotConfig.pinned(List.of(1, 0), true)));
  }
}
