package io.partita.common.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.avro.InferenceRequest;
import io.partita.common.config.ConfigException;
import io.partita.common.config.Settings;
import io.partita.schemas.DecodeException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CodecsTest {
  private static final InferenceRequest REQUEST = InferenceRequest.newBuilder().setId("r1").setServiceModel("m").setInputs(List.of()).build();

  @Test
  void shouldDefaultToSingleObjectAndRoundTrip() {
    Codecs codecs = Codecs.from(Settings.of(Map.of()));
    assertThat(codecs.mode()).isEqualTo(Codecs.SINGLE_OBJECT);
    RecordCodec<InferenceRequest> codec = codecs.codec(InferenceRequest.class);
    assertThat(codec.decode("t", codec.encode("t", REQUEST))).isEqualTo(REQUEST);
  }

  @Test
  void shouldNameTheSettingWhenRegistryModeHasNoUrl() {
    assertThatThrownBy(() -> Codecs.from(Settings.of(Map.of("serde.mode", "registry"))))
        .isInstanceOf(ConfigException.class).hasMessageStartingWith("serde.registry.url: missing");
  }

  @Test
  void shouldNameTheSettingWhenTheModeIsUnknown() {
    assertThatThrownBy(() -> Codecs.from(Settings.of(Map.of("serde.mode", "protobuf"))))
        .isInstanceOf(ConfigException.class).hasMessageContaining("serde.mode=protobuf").hasMessageContaining("registry");
  }

  @Test
  void shouldRefuseAnUnknownCompatibilityLevel() {
    assertThatThrownBy(() -> Codecs.from(Settings.of(Map.of("serde.mode", "registry", "serde.registry.url", "http://localhost:1/api",
            "serde.registry.compatibility", "sideways"))))
        .isInstanceOf(ConfigException.class).hasMessageStartingWith("serde.registry.compatibility=SIDEWAYS");
  }

  @Test
  void shouldNotShowTheRegistryPasswordInLogs() {
    RegistrySettings s = RegistrySettings.from(Settings.of(Map.of("serde.registry.url", "http://r:8080/apis/ccompat/v7",
        "serde.registry.username", "u", "serde.registry.password", "hunter2")));
    assertThat(s.toString()).doesNotContain("hunter2").contains("****");
  }

  @Test
  void shouldRejectBytesWithoutTheRegistryMagicByteBeforeAskingTheRegistry() {
    // Port 1 refuses connections: a registry call would be a SchemaRegistryException, not a DecodeException.
    RecordCodec<InferenceRequest> codec = Codecs.registry(RegistrySettings.of("http://localhost:1/apis/ccompat/v7")).codec(InferenceRequest.class);
    byte[] singleObject = Codecs.singleObject().codec(InferenceRequest.class).encode("t", REQUEST);
    assertThatThrownBy(() -> codec.decode("t", singleObject)).isInstanceOf(DecodeException.class).hasMessageContaining("wire format");
    assertThatThrownBy(() -> codec.decode("t", new byte[] {0, 0})).isInstanceOf(DecodeException.class);
  }

  @Test
  void shouldReportAnUnreachableRegistryAsAnInfrastructureFaultNamingTheSetting() {
    RecordCodec<InferenceRequest> codec = Codecs.registry(RegistrySettings.of("http://localhost:1/apis/ccompat/v7")).codec(InferenceRequest.class);
    assertThatThrownBy(() -> codec.encode("t", REQUEST)).isInstanceOf(SchemaRegistryException.class)
        .hasMessageContaining("serde.registry.url").hasMessageContaining("not reachable");
  }
}
