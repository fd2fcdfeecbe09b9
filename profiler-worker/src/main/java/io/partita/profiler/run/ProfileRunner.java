package io.partita.profiler.run;

import ai.onnxruntime.OrtEnvironment;
import io.partita.profiler.env.ProbedHost;
import io.partita.profiler.env.ProviderProbe.Provider;
import io.partita.profiler.measure.GroupingResult;
import io.partita.profiler.measure.Measurer;
import io.partita.profiler.measure.ModelRef;
import io.partita.profiler.measure.TimingResult;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one {@link ProfileSpec} on this host: finds the versions, lists every step up front (so
 * progress has a total), measures them one after another with a {@link Measurer} and hands each
 * result to the sink as soon as it exists. No Kafka here; the service and the command line each
 * bring their own sink.
 *
 * <p>A point that ran but did not settle (its result not stable, so the planner does not plan with
 * it) is measured once more after the listed steps, and that second result is the one the outcome
 * keeps; the sink gets both, the second as one of the steps added at the end. What unsettles a
 * point is mostly passing: on a host under a CPU quota, the JIT and start-up of the other processes
 * sharing the quota (the host's worker starts beside its profiler) move the rate the point is
 * measured by, and a later try meets a quieter host. One try more, not more: a point that does not
 * settle twice is reported as it is.
 *
 * <p>An unknown model or version measures nothing and returns an outcome with the error. A step
 * that fails is a failed result, and the run goes on. An interrupt stops the run between steps.
 */
public final class ProfileRunner {

  private static final Logger log = LoggerFactory.getLogger(ProfileRunner.class);

  private final OrtEnvironment env;
  private final Measurer.Settings settings;

  /**
   * @param settings dims, pinning, memory and spinning for every run, and the sampler's rules; the
   *     sampler's budget is replaced by each spec's (scaled to the host's CPU quota) and its rate
   *     blocks by the host's
   */
  public ProfileRunner(OrtEnvironment env, Measurer.Settings settings) {
    this.env = env;
    this.settings = settings;
  }

  private sealed interface Step permits PointStep, GroupingStep {
    ModelRef model();
  }

  private record PointStep(ModelRef model, Provider provider, int size, int batch) implements Step {}

  private record GroupingStep(ModelRef model, Provider provider, List<Integer> sizes, int batch) implements Step {}

  public ProfileOutcome run(ProfileSpec spec, ProbedHost host, RepositoryModels models, ProfileSink sink) {
    List<ModelRef> refs;
    try {
      refs = models.resolve(spec.model(), spec.version());
    } catch (ModelLookupException e) {
      return ProfileOutcome.failed(spec, e.field() + ": " + e.getMessage());
    }
    return run(spec, host, refs, sink);
  }

  /** Runs the spec on versions already found. */
  public ProfileOutcome run(ProfileSpec spec, ProbedHost host, List<ModelRef> refs, ProfileSink sink) {
    Measurer measurer = new Measurer(env, host, new Measurer.Settings(
        settings.sampler().withBudgetNanos(host.wallBudgetMillis(spec.budgetMillis()) * 1_000_000L)
            .withRateBlocks(host.rateBlockNanos()),
        settings.dims(), settings.commands(),
        settings.measureMemory(), settings.spinning()));
    List<Provider> providers = spec.providers().isEmpty()
        ? host.executionProviders().stream().map(Provider::valueOf).toList()
        : spec.providers();
    List<Step> steps = new ArrayList<>();
    for (ModelRef ref : refs) {
      List<Integer> batches = spec.batches().isEmpty() ? measurer.defaultBatches(ref) : spec.batches();
      for (Provider p : providers) {
        if (spec.measuresPoints()) {
          for (int size : spec.sizes().isEmpty() ? measurer.defaultSizes(p) : spec.sizes()) {
            for (int batch : batches) {
              steps.add(new PointStep(ref, p, size, batch));
            }
          }
        }
        for (List<Integer> grouping : spec.groupings()) {
          for (int batch : batches) {
            steps.add(new GroupingStep(ref, p, grouping, batch));
          }
        }
      }
    }
    List<TimingResult> points = new ArrayList<>();
    List<PointStep> pointSteps = new ArrayList<>();
    List<GroupingResult> groupings = new ArrayList<>();
    int total = steps.size();
    for (int i = 0; i < total; i++) {
      if (Thread.currentThread().isInterrupted()) {
        return interrupted(spec, refs, points, groupings, i, total);
      }
      Step step = steps.get(i);
      sink.starting(i, total, label(step));
      if (step instanceof PointStep p) {
        TimingResult r = measurer.measurePoint(p.model(), p.provider(), p.size(), p.batch());
        points.add(r);
        pointSteps.add(p);
        sink.point(r, i + 1, total);
      } else if (step instanceof GroupingStep g) {
        GroupingResult r = measurer.measureGrouping(g.model(), g.provider(), g.sizes(), g.batch());
        groupings.add(r);
        sink.grouping(r, i + 1, total);
      }
    }
    List<Integer> unsettled = new ArrayList<>();
    for (int j = 0; j < points.size(); j++) {
      TimingResult r = points.get(j);
      if (r.ok() && !r.stable()) {
        unsettled.add(j);
        log.info("{} did not settle (p50 {} ms, mean {} ms, {} runs): measuring it again after the other points",
            label(pointSteps.get(j)), String.format("%.3f", r.p50Ms()), String.format("%.3f", r.meanMs()), r.samples());
      }
    }
    int withRetries = total + unsettled.size();
    for (int k = 0; k < unsettled.size(); k++) {
      if (Thread.currentThread().isInterrupted()) {
        return interrupted(spec, refs, points, groupings, total + k, withRetries);
      }
      int j = unsettled.get(k);
      PointStep p = pointSteps.get(j);
      sink.starting(total + k, withRetries, label(p) + " (again: it did not settle)");
      TimingResult r = measurer.measurePoint(p.model(), p.provider(), p.size(), p.batch());
      log.info("{} measured again: {} (p50 {} ms, mean {} ms, {} runs)", label(p), r.ok() && r.stable() ? "settled"
          : "did not settle", String.format("%.3f", r.p50Ms()), String.format("%.3f", r.meanMs()), r.samples());
      points.set(j, r);
      sink.point(r, total + k + 1, withRetries);
    }
    return new ProfileOutcome(spec.requestId(), spec.model(), versions(refs), points, groupings, null);
  }

  private static ProfileOutcome interrupted(ProfileSpec spec, List<ModelRef> refs, List<TimingResult> points,
      List<GroupingResult> groupings, int done, int total) {
    return new ProfileOutcome(spec.requestId(), spec.model(), versions(refs), points, groupings,
        "interrupted after " + done + " of " + total + " steps");
  }

  private static List<String> versions(List<ModelRef> refs) {
    return refs.stream().map(ModelRef::version).toList();
  }

  private static String label(Step step) {
    String v = step.model().model() + "/" + step.model().version() + " ";
    if (step instanceof PointStep p) {
      return v + p.provider() + " size=" + p.size() + " batch=" + p.batch();
    }
    GroupingStep g = (GroupingStep) step;
    return v + g.provider() + " grouping=" + g.sizes() + " batch=" + g.batch();
  }
}
