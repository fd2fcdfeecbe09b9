package io.partita.schemas;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class AvroCodecTest {
  private final AvroCodec<InferenceRequest> requests = AvroCodec.of(InferenceRequest.class);
  private static final InferenceRequest REQUEST = InferenceRequest.newBuilder()
      .setId("r1").setServiceModel("demo").setInputs(java.util.List.of()).build();
  private static final InferenceReply REPLY = InferenceReply.newBuilder().setId("r1").setServiceModel("demo").build();

  @Test
  void shouldRoundTripWithSingleObjectHeader() {
    byte[] bytes = requests.encode(REQUEST);
    assertThat(bytes[0]).isEqualTo((byte) 0xC3);
    assertThat(bytes[1]).isEqualTo((byte) 0x01);
    assertThat(requests.decode(bytes)).isEqualTo(REQUEST);
  }

  @Test
  void shouldRaiseTypedErrorForGarbage() {
    assertThatThrownBy(() -> requests.decode("hello, world".getBytes(StandardCharsets.UTF_8)))
        .isInstanceOf(DecodeException.class)
        .hasMessageContaining("not a InferenceRequest");
  }

  @Test
  void shouldRaiseTypedErrorForAnotherRecordType() {
    byte[] reply = AvroCodec.of(InferenceReply.class).encode(REPLY);
    assertThatThrownBy(() -> requests.decode(reply)).isInstanceOf(DecodeException.class);
  }

  @Test
  void shouldRaiseTypedErrorForTruncatedBody() {
    byte[] bytes = requests.encode(REQUEST);
    byte[] truncated = java.util.Arrays.copyOf(bytes, 14);
    assertThatThrownBy(() -> requests.decode(truncated)).isInstanceOf(DecodeException.class);
  }

  @Test
  void shouldRaiseTypedErrorForNull() {
    assertThatThrownBy(() -> requests.decode(null)).isInstanceOf(DecodeException.class);
  }
}
