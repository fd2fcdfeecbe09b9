package io.partita.schemas;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.avro.Tensor;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
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

  private static InferenceRequest withTensor(String id, int bytes, long seed) {
    byte[] data = new byte[bytes];
    new Random(seed).nextBytes(data);
    Tensor t = Tensor.newBuilder().setName("x").setDatatype("UINT8").setShape(List.of((long) bytes))
        .setData(ByteBuffer.wrap(data)).build();
    return InferenceRequest.newBuilder().setId(id).setServiceModel("demo").setInputs(List.of(t)).build();
  }

  @Test
  void shouldRoundTripRecordsOfVeryDifferentSizesOneAfterAnotherOnOneThread() {
    // The encoder reuses one buffer per thread: a small record after a big one (and after one past
    // the size a thread keeps) must carry only its own bytes.
    for (int size : new int[] {600_000, 10, 5_000_000, 3, 530_000, 0}) {
      InferenceRequest r = withTensor("r" + size, size, size);
      byte[] bytes = requests.encode(r);
      assertThat(requests.decode(bytes)).isEqualTo(r);
      assertThat(bytes.length).isLessThan(size + 64);
    }
  }

  @Test
  void shouldDecodeBytesValuesAsViewsOfTheRecordNotCopies() {
    InferenceRequest r = withTensor("big", 530_000, 7);
    byte[] bytes = requests.encode(r);

    ByteBuffer data = requests.decode(bytes).getInputs().get(0).getData();

    assertThat(data).isEqualTo(r.getInputs().get(0).getData());
    assertThat(data.hasArray()).isTrue();
    assertThat(data.array()).isSameAs(bytes);
    assertThat(data.remaining()).isEqualTo(530_000);
    // The view ends where the value ends: the fields after it are not part of it.
    assertThat(data.arrayOffset() + data.remaining()).isLessThan(bytes.length);
  }
}
