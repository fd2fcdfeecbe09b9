package io.partita.planner.plan;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * What the planner has asked the profiler of one host and pool ({@code measure-asks-store}, key
 * host/pool): the last request, when it was sent, the groupings it still waits for, and when to
 * look again at groupings the planner wants but could not ask for yet. One record per host and
 * pool, so the state is bounded by the pools of the cluster.
 *
 * @param requestId the last request sent, or null before the first
 * @param askedAtMs when it was sent (the planner's punctuation time)
 * @param open grouping keys ({@link Keys#grouping}) of that request not answered yet
 * @param lookAgainAtMs when a wanted grouping could be asked for (the rate limit or the timeout
 *     ends); 0 when nothing waits
 */
public record AskState(String requestId, long askedAtMs, List<String> open, long lookAgainAtMs) {
  public AskState {
    open = List.copyOf(open);
  }

  /** Whether the request still waits for an answer at {@code now}. */
  public boolean outstanding(long now, MeasureSettings settings) {
    return requestId != null && !open.isEmpty() && now - askedAtMs < settings.timeoutMs();
  }

  /** The state once {@code groupingKey} of request {@code id} was answered (measured, failed or unstable). */
  public AskState answered(String id, String groupingKey) {
    if (requestId == null || !requestId.equals(id) || !open.contains(groupingKey)) {
      return this;
    }
    List<String> left = new ArrayList<>(open);
    left.remove(groupingKey);
    return new AskState(requestId, askedAtMs, left, lookAgainAtMs);
  }

  public byte[] encode() {
    StringBuilder s = new StringBuilder().append(askedAtMs).append('\n').append(lookAgainAtMs).append('\n')
        .append(requestId == null ? "" : requestId);
    open.forEach(k -> s.append('\n').append(k));
    return s.toString().getBytes(StandardCharsets.UTF_8);
  }

  public static AskState decode(byte[] bytes) {
    if (bytes == null) {
      return null;
    }
    String[] lines = new String(bytes, StandardCharsets.UTF_8).split("\n", -1);
    List<String> open = new ArrayList<>();
    for (int i = 3; i < lines.length; i++) {
      open.add(lines[i]);
    }
    return new AskState(lines[2].isEmpty() ? null : lines[2], Long.parseLong(lines[0]), open, Long.parseLong(lines[1]));
  }
}
