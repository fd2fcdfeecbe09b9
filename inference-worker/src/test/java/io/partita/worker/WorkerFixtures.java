package io.partita.worker;

import io.partita.avro.InferenceRequest;
import io.partita.avro.Tensor;
import io.partita.common.KafkaHeaders;
import io.partita.models.demo.DemoMlp;
import io.partita.schemas.AvroCodec;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import org.apache.kafka.clients.producer.ProducerRecord;

/** Builds demo requests and reads float outputs, for worker tests. */
public final class WorkerFixtures {
  private WorkerFixtures() {}

  public static Tensor floats(String name, float[][] rows) {
    ByteBuffer b = ByteBuffer.allocate(rows.length * rows[0].length * 4).order(ByteOrder.LITTLE_ENDIAN);
    for (float[] row : rows) {
      for (float v : row) {
        b.putFloat(v);
      }
    }
    b.flip();
    return Tensor.newBuilder().setName(name).setDatatype("FP32").setShape(List.of((long) rows.length, (long) rows[0].length)).setData(b).build();
  }

  public static float[][] toRows(Tensor t) {
    int rows = t.getShape().get(0).intValue();
    int cols = t.getShape().get(1).intValue();
    ByteBuffer b = t.getData().duplicate().order(ByteOrder.LITTLE_ENDIAN);
    float[][] out = new float[rows][cols];
    for (int r = 0; r < rows; r++) {
      for (int c = 0; c < cols; c++) {
        out[r][c] = b.getFloat();
      }
    }
    return out;
  }

  public static InferenceRequest request(String id, String serviceModel, float[][] x) {
    return InferenceRequest.newBuilder().setId(id).setServiceModel(serviceModel).setInputs(List.of(floats(DemoMlp.INPUT, x))).build();
  }

  /** A request for {@code rows} rows of the demo input, pinned to a version (null = newest). */
  public static InferenceRequest request(String id, String serviceModel, String version, float[][] x) {
    InferenceRequest r = request(id, serviceModel, x);
    r.setVersion(version);
    return r;
  }

  /** The demo repository written and scanned under {@code root}. */
  public static io.partita.models.repo.RepositoryIndex demoRepository(java.nio.file.Path root) throws java.io.IOException {
    io.partita.models.demo.DemoRepository.writeTo(root);
    return io.partita.models.repo.ModelRepository.scan(root);
  }

  public static ProducerRecord<String, byte[]> record(String topic, InferenceRequest request, String replyTo) {
    ProducerRecord<String, byte[]> r = new ProducerRecord<>(topic, request.getId(), AvroCodec.of(InferenceRequest.class).encode(request));
    KafkaHeaders.put(r.headers(), KafkaHeaders.REPLY_TO, replyTo);
    KafkaHeaders.put(r.headers(), KafkaHeaders.CORRELATION_ID, request.getId());
    return r;
  }
}
