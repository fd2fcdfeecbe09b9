package io.partita.gateway.jobs;

import io.partita.avro.JobItem;
import io.partita.avro.Tensor;
import io.partita.common.packing.Rows;
import java.util.ArrayList;
import java.util.List;

/**
 * Job rows sent as one request: their inputs concatenated along the first (batch) dimension, in
 * the order of the members, and the reply's outputs cut back into one set per member ({@link Rows}).
 * A pack of one member is that row's own request, unchanged. Pure: no Kafka.
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
    return new Pack(List.of(new Member(index, item, Math.max(1, Rows.rows(item.getInputs())))));
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

  /** The request's inputs: each input of the first member, with every member's rows of it stacked in order ({@link Rows#stack}). */
  public List<Tensor> inputs() {
    List<List<Tensor>> parts = new ArrayList<>(members.size());
    for (Member m : members) {
      parts.add(m.item().getInputs());
    }
    return Rows.stack(parts, rows());
  }

  /**
   * Cuts the reply's outputs back per member, in member order ({@link Rows#split}): member {@code i}
   * gets, of every output, the {@code rows} leading rows that follow those of the members before it.
   *
   * @throws IllegalArgumentException when an output does not have one leading row per input row
   *     (the model does not keep the batch), so the rows must be sent alone
   */
  public List<List<Tensor>> split(List<Tensor> outputs) {
    return Rows.split(outputs, members.stream().mapToInt(Member::rows).toArray());
  }
}
