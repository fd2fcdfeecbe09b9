package io.partita.gateway.jobs;

import io.partita.avro.JobItem;
import io.partita.avro.Tensor;
import io.partita.models.repo.ElementType;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Job rows sent as one request: their inputs concatenated along the first (batch) dimension, in
 * the order of the members, and the reply's outputs cut back into one set per member. A pack of one
 * member is that row's own request, unchanged. Pure: no Kafka.
 *
 * @param members the rows, in input order; at least one, all of one layout ({@link RowPacker})
 */
public record Pack(List<Member> members) {
  /**
   * One row of a pack.
   *
   * @param index the row's input position in the job
   * @param item the row as submitted
   * @param rows its leading dimension (a job line may itself carry several rows)
   */
  public record Member(int index, JobItem item, int rows) {}

  public Pack {
    members = List.copyOf(members);
    if (members.isEmpty()) {
      throw new IllegalArgumentException("a pack needs at least one member");
    }
  }

  /** A pack of one row. */
  public static Pack alone(int index, JobItem item) {
    return new Pack(List.of(new Member(index, item, Math.max(1, RowPacker.rows(item)))));
  }

  public boolean single() {
    return members.size() == 1;
  }

  public int firstIndex() {
    return members.get(0).index();
  }

  /** Rows of every member together: the leading dimension of the packed inputs. */
  public int rows() {
    return members.stream().mapToInt(Member::rows).sum();
  }

  /** Output names wanted (the same for every member); empty means all. */
  public List<String> outputs() {
    return members.get(0).item().getOutputs();
  }

  /** The request's inputs: each input of the first member, with every member's rows of it stacked in order. */
  public List<Tensor> inputs() {
    if (single()) {
      return members.get(0).item().getInputs();
    }
    List<Tensor> stacked = new ArrayList<>();
    for (Tensor first : members.get(0).item().getInputs()) {
      List<Tensor> parts = new ArrayList<>(members.size());
      int bytes = 0;
      for (Member m : members) {
        Tensor part = m.item().getInputs().stream().filter(t -> t.getName().equals(first.getName())).findFirst()
            .orElseThrow(() -> new IllegalStateException("row " + m.index() + " has no input '" + first.getName() + "'"));
        parts.add(part);
        bytes = Math.addExact(bytes, part.getData().remaining());
      }
      ByteBuffer data = ByteBuffer.allocate(bytes);
      for (Tensor part : parts) {
        data.put(part.getData().duplicate());
      }
      data.flip();
      List<Long> shape = new ArrayList<>(first.getShape());
      shape.set(0, (long) rows());
      stacked.add(Tensor.newBuilder().setName(first.getName()).setDatatype(first.getDatatype()).setShape(shape).setData(data).build());
    }
    return stacked;
  }

  /**
   * Cuts the reply's outputs back per member, in member order: member {@code i} gets, of every
   * output, the {@code rows} leading rows that follow those of the members before it.
   *
   * @throws IllegalArgumentException when an output does not have one leading row per input row
   *     (the model does not keep the batch), so the rows must be sent alone
   */
  public List<List<Tensor>> split(List<Tensor> outputs) {
    if (single()) {
      return List.of(outputs);
    }
    int total = rows();
    List<List<Tensor>> perMember = new ArrayList<>(members.size());
    for (int i = 0; i < members.size(); i++) {
      perMember.add(new ArrayList<>(outputs.size()));
    }
    for (Tensor out : outputs) {
      List<Long> shape = out.getShape();
      ByteBuffer data = out.getData().duplicate();
      if (shape.isEmpty() || shape.get(0) != total || data.remaining() % total != 0) {
        throw new IllegalArgumentException("output '" + out.getName() + "' has shape " + shape + " and " + data.remaining()
            + " bytes; " + total + " packed rows need that many leading rows");
      }
      int rowBytes = data.remaining() / total;
      long perRowElements = 1;
      for (int d = 1; d < shape.size(); d++) {
        perRowElements *= shape.get(d);
      }
      ElementType type = ElementType.fromOipDatatype(out.getDatatype()).orElse(ElementType.OTHER);
      if (type.byteSize() > 0 && perRowElements * type.byteSize() != rowBytes) {
        throw new IllegalArgumentException("output '" + out.getName() + "' has shape " + shape + " but "
            + data.remaining() + " bytes of " + out.getDatatype());
      }
      int position = data.position();
      for (int i = 0; i < members.size(); i++) {
        int rows = members.get(i).rows();
        ByteBuffer slice = ByteBuffer.allocate(rows * rowBytes);
        ByteBuffer source = data.duplicate();
        source.position(position).limit(position + rows * rowBytes);
        slice.put(source).flip();
        position += rows * rowBytes;
        List<Long> memberShape = new ArrayList<>(shape);
        memberShape.set(0, (long) rows);
        perMember.get(i).add(new Tensor(out.getName(), out.getDatatype(), memberShape, slice)); // per row: no builder
      }
    }
    return perMember;
  }
}
