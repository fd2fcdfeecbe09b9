package io.partita.worker.slot;

import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.avro.Tensor;
import io.partita.worker.serving.BatchTensors;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A request with more rows than its slot's largest batch, cut along the leading dimension into
 * slot-sized parts that queue and batch like any other request (a short last part may share a
 * batch with other requests), and the parts' replies merged back into one reply for the caller.
 *
 * <p>Guarantees: the caller's job is answered exactly once, when every part was answered; with the
 * parts' outputs concatenated in row order (the same tensors as one run of the whole request), or,
 * when any part failed (model error, deadline, not ready), with the first failed part's error. Parts
 * share the job's {@link Stages}, so its run stamps span every part's run. Only requests whose
 * inputs all share the leading size (the batching check) may be split.
 */
final class SplitJob {
  private final Job whole;
  private final InferenceReply[] replies;
  private final AtomicInteger left;
  private final List<Job> parts;

  private SplitJob(Job whole, int[] rows) {
    this.whole = whole;
    this.replies = new InferenceReply[rows.length];
    this.left = new AtomicInteger(rows.length);
    InferenceRequest request = whole.request();
    List<List<Tensor>> sliced = new ArrayList<>();
    for (int i = 0; i < rows.length; i++) {
      sliced.add(new ArrayList<>());
    }
    for (Tensor t : request.getInputs()) {
      List<Tensor> pieces = BatchTensors.split(t, rows);
      for (int i = 0; i < rows.length; i++) {
        sliced.get(i).add(pieces.get(i));
      }
    }
    List<Job> out = new ArrayList<>(rows.length);
    for (int i = 0; i < rows.length; i++) {
      int index = i;
      InferenceRequest part = InferenceRequest.newBuilder(request).setId(request.getId() + "#" + i).setInputs(sliced.get(i)).build();
      out.add(new Job(part, whole.recordTimestampMs(), whole.arrivedAtMs(), whole.arrivedAtNanos(), whole.deadlineMs(),
          reply -> answered(index, reply), whole.stages()));
    }
    this.parts = List.copyOf(out);
  }

  /** The parts of {@code job}, {@code limit} rows each but the last, answering {@code job} once all are answered. */
  static List<Job> parts(Job job, int rows, int limit) {
    return new SplitJob(job, sizes(rows, limit)).parts;
  }

  /** Row counts of the parts: {@code limit} each, the rest in the last. */
  static int[] sizes(int rows, int limit) {
    if (limit < 1 || rows < 1) {
      throw new IllegalArgumentException("cannot cut " + rows + " rows into parts of " + limit);
    }
    int n = (rows + limit - 1) / limit;
    int[] sizes = new int[n];
    for (int i = 0; i < n; i++) {
      sizes[i] = Math.min(limit, rows - i * limit);
    }
    return sizes;
  }

  private void answered(int index, InferenceReply reply) {
    synchronized (replies) {
      replies[index] = reply;
    }
    if (left.decrementAndGet() == 0) {
      InferenceReply merged;
      synchronized (replies) {
        merged = merge(whole.request().getId(), replies);
      }
      whole.answer().accept(merged);
    }
  }

  /** One reply from the parts' replies, in order: the first error, or the outputs concatenated. */
  static InferenceReply merge(String id, InferenceReply[] parts) {
    for (InferenceReply r : parts) {
      if (r.getError() != null) {
        return InferenceReply.newBuilder(r).setId(id).build();
      }
    }
    InferenceReply first = parts[0];
    List<Tensor> outputs = new ArrayList<>();
    for (int o = 0; o < first.getOutputs().size(); o++) {
      List<Tensor> pieces = new ArrayList<>(parts.length);
      String name = first.getOutputs().get(o).getName();
      for (InferenceReply r : parts) {
        pieces.add(r.getOutputs().stream().filter(t -> t.getName().equals(name)).findFirst()
            .orElseThrow(() -> new IllegalStateException("a part of request " + id + " has no output '" + name + "'")));
      }
      outputs.add(BatchTensors.concat(pieces));
    }
    long inference = 0;
    for (InferenceReply r : parts) {
      inference += r.getInferenceMicros();
    }
    return InferenceReply.newBuilder(first).setId(id).setOutputs(outputs).setInferenceMicros(inference).build();
  }
}
