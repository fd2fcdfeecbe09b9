package io.partita.planner.plan;

import io.partita.avro.GroupingOption;
import io.partita.avro.PartitionPlan;
import io.partita.avro.ProfileRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * What the planner asks the profilers to measure, so that its choices come to rest on
 * measurements: after a grouping is chosen, a grouping-mode measurement of exactly its sizes,
 * batch and provider, and of its best runner-up when that one is expected within
 * {@code planner.measure.margin} of the choice. At most one request is outstanding per host and
 * pool, a new one goes out at most once per {@code planner.measure.interval.ms}, and a grouping
 * asked for is not asked for again within {@code planner.measure.retry.ms} (a failed or unstable
 * measurement never makes the planner ask in a loop). Pure: the caller brings the time and the
 * state.
 */
public final class MeasurementAsks {
  /** Prefix of the request ids the planner sends. */
  public static final String REQUEST_PREFIX = "planner-";

  private MeasurementAsks() {}

  /** The groupings of one plan that are not measured and worth measuring; empty when none. */
  public static List<List<Integer>> wanted(PartitionPlan plan, double margin) {
    List<List<Integer>> out = new ArrayList<>();
    // A plan predicted from another host's timings waits for this host's own single-size timings
    // (the profiler measures its models); a grouping measurement could not be compared with them yet.
    if (!plan.getPlanned() || plan.getDefaultPlan() || !"split".equals(plan.getPlacement())
        || plan.getSizes().isEmpty() || plan.getPredictedFrom() != null) {
      return out;
    }
    if (!"measured".equals(plan.getBasis())) {
      out.add(List.copyOf(plan.getSizes()));
    }
    if (!plan.getRunnersUp().isEmpty() && plan.getExpectedThroughput() != null) {
      GroupingOption next = plan.getRunnersUp().get(0);
      if (!"measured".equals(next.getBasis()) && next.getExpectedThroughput() != null
          && next.getExpectedThroughput() >= plan.getExpectedThroughput() * (1 - margin)) {
        out.add(List.copyOf(next.getSizes()));
      }
    }
    return out;
  }

  /** The grouping keys a plan's wanted groupings are measured under. */
  public static List<String> keys(PartitionPlan plan, List<List<Integer>> groupings) {
    List<String> keys = new ArrayList<>();
    groupings.forEach(g -> keys.add(Keys.grouping(plan.getModel(), plan.getVersion(), plan.getHost(), plan.getPool(),
        plan.getBatch(), plan.getProvider(), g)));
    return keys;
  }

  /** A decision for one host and pool: the request to send (or null) and the state to keep. */
  public record Decision(ProfileRequest request, AskState state) {}

  /**
   * @param plans the live partition plans of one host and pool, in key order
   * @param state what was asked there before, or null
   * @param askedRecently whether a grouping key was asked for within the retry time
   */
  public static Decision decide(String host, String pool, List<PartitionPlan> plans, AskState state,
      Predicate<String> askedRecently, long now, MeasureSettings settings) {
    PartitionPlan target = null;
    List<List<Integer>> groupings = new ArrayList<>();
    for (PartitionPlan plan : plans) {
      for (List<Integer> g : wanted(plan, settings.margin())) {
        if (!askedRecently.test(keys(plan, List.of(g)).get(0))) {
          groupings.add(g);
        }
      }
      if (!groupings.isEmpty()) {
        target = plan;
        break;
      }
    }
    AskState current = state == null ? new AskState(null, 0, List.of(), 0) : state;
    if (target == null) {
      return new Decision(null, new AskState(current.requestId(), current.askedAtMs(), current.open(), 0));
    }
    long notBefore = current.requestId() == null ? now : current.askedAtMs() + settings.intervalMs();
    if (current.outstanding(now, settings)) {
      notBefore = Math.max(notBefore, current.askedAtMs() + settings.timeoutMs());
    }
    if (now < notBefore) {
      return new Decision(null, new AskState(current.requestId(), current.askedAtMs(), current.open(), notBefore));
    }
    String id = REQUEST_PREFIX + host + "-" + pool + "-" + now;
    ProfileRequest request = ProfileRequest.newBuilder().setRequestId(id).setHost(host).setModel(target.getModel())
        .setVersion(target.getVersion()).setSizes(List.of()).setBatches(List.of(target.getBatch()))
        .setGroupings(groupings).setBudgetMs(settings.budgetMs()).setProviders(List.of(target.getProvider()))
        .setPool(pool).build();
    return new Decision(request, new AskState(id, now, keys(target, groupings), 0));
  }
}
