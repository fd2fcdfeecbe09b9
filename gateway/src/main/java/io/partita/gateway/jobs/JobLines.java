package io.partita.gateway.jobs;

import com.fasterxml.jackson.databind.JsonNode;
import io.partita.avro.JobItem;
import io.partita.avro.Tensor;
import io.partita.gateway.oip.InferBody;
import io.partita.gateway.oip.JsonLimits;
import io.partita.gateway.refusal.Refusal;
import io.partita.gateway.refusal.Refusal.Kind;
import io.partita.models.repo.ModelSignature;
import java.util.ArrayList;
import java.util.List;

/**
 * A job's input: JSON lines, one Open Inference Protocol infer request per line, numbered from 0
 * in order (blank lines are skipped and not numbered). Each line is checked against the model now;
 * a line that fails keeps its place and becomes an error item (its result says why), so one bad
 * line does not sink the job. Items are then cut into chunks that fit in one Kafka record.
 */
public final class JobLines {
  /** Largest tensor data of one item; a bigger one is refused (send it to the infer endpoint). */
  public static final int MAX_ITEM_BYTES = 768 * 1024;
  /** Target size of one chunk record. */
  public static final int CHUNK_BYTES = 512 * 1024;

  private JobLines() {}

  /** Parses the body; refused as too large over {@code maxItems}, as bad input when there is no line. */
  public static List<JobItem> parse(byte[] body, ModelSignature signature, int maxItems) {
    return parse(body, signature, maxItems, JsonLimits.DEFAULTS);
  }

  /**
   * As {@link #parse(byte[], ModelSignature, int)}, reading each line within {@code limits}
   * ({@code gateway.json.*}); a line over them becomes an error item naming the limit.
   */
  public static List<JobItem> parse(byte[] body, ModelSignature signature, int maxItems, JsonLimits limits) {
    List<JobItem> items = new ArrayList<>();
    int start = 0;
    while (start <= body.length) {
      int end = start;
      while (end < body.length && body[end] != '\n') {
        end++;
      }
      int stop = end > start && body[end - 1] == '\r' ? end - 1 : end;
      if (!blank(body, start, stop)) {
        if (items.size() >= maxItems) {
          throw new Refusal(Kind.TOO_LARGE, "the job has more than " + maxItems + " items (gateway.jobs.max.items)");
        }
        items.add(item(body, start, stop, signature, limits));
      }
      start = end + 1;
    }
    if (items.isEmpty()) {
      throw Refusal.badInput("body: no items; send one JSON infer request per line");
    }
    return items;
  }

  private static JobItem item(byte[] body, int start, int stop, ModelSignature signature, JsonLimits limits) {
    JobItem.Builder item = JobItem.newBuilder().setClientId(null).setInputs(List.of()).setOutputs(List.of()).setError(null);
    JsonNode node;
    try {
      node = limits.read(body, start, stop - start, "line");
    } catch (Refusal e) {
      return item.setError(e.getMessage()).build();
    }
    if (node == null || !node.isObject()) {
      return item.setError("line: expected a JSON object").build();
    }
    if (node.get("id") != null && node.get("id").isTextual()) {
      item.setClientId(node.get("id").asText());
    }
    try {
      InferBody.Parsed parsed = InferBody.parseJson(node, signature);
      long bytes = parsed.inputs().stream().mapToLong(t -> t.getData().remaining()).sum();
      if (bytes > MAX_ITEM_BYTES) {
        return item.setError("inputs: " + bytes + " bytes of tensor data, over the job item limit of "
            + MAX_ITEM_BYTES + "; send it to the infer endpoint").build();
      }
      return item.setInputs(parsed.inputs()).setOutputs(parsed.outputs()).build();
    } catch (Refusal e) {
      return item.setError(e.getMessage()).build();
    }
  }

  private static boolean blank(byte[] body, int start, int stop) {
    for (int i = start; i < stop; i++) {
      if (!Character.isWhitespace(body[i])) {
        return false;
      }
    }
    return true;
  }

  /** Cuts the items into consecutive chunks of about {@link #CHUNK_BYTES} (at least one item each). */
  public static List<List<JobItem>> chunks(List<JobItem> items) {
    return ByteParts.cut(items, item -> 64 + (item.getError() == null ? 0 : item.getError().length())
        + item.getInputs().stream().mapToLong(JobLines::size).sum(), CHUNK_BYTES);
  }

  private static long size(Tensor t) {
    return t.getData().remaining() + t.getName().length() + 8L * t.getShape().size() + 16;
  }
}
