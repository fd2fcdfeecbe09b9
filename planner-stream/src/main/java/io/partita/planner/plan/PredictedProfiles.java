package io.partita.planner.plan;

import io.partita.avro.HostEnvironment;
import io.partita.planner.plan.Plans.Profile;
import io.partita.planning.version.HostFacts;
import io.partita.planning.version.ProfilePrediction;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The profile a host's partition plan is made from: the host's own timings of the model version on
 * the pool, or, while it has none of that version on any pool, the profile of the most similar host
 * that measured it there, scaled by the two hosts' baseline scores ({@link ProfilePrediction}, the
 * similarity order version choice uses). Pure.
 *
 * <p>Only the CPU pool is predicted: the baseline score is a CPU benchmark, so it says nothing of
 * how two hosts' GPUs compare. A GPU pool without timings of its own keeps the default placement.
 */
public final class PredictedProfiles {

  private PredictedProfiles() {}

  /**
   * A host's profile of one model version on one pool.
   *
   * @param predicted where it was predicted from, or null when it is the host's own
   */
  public record HostProfile(Profile profile, ProfilePrediction.Predicted predicted) {
    public boolean own() {
      return predicted == null;
    }
  }

  /**
   * The profile to plan one model version on one pool of a host with: its own when it has one; a
   * prediction when it has no timing of the version on any pool and a similar host measured it on
   * the CPU pool, both hosts having published a baseline score; otherwise null.
   *
   * <p>The prediction is {@link ProfilePrediction#predict} over every other host's profile, found
   * without building them all: the other hosts are put in similarity order once per target host
   * ({@link SimilarHosts}) and walked to the first one with a baseline score whose profile the target
   * can use (provider loaded, points measured), which is the one {@code predict} would choose; only the hosts
   * that measured the version are looked at, by the tables' index ({@code PredictedProfilesTest}
   * checks that this equals the prediction from every host). Predictions are kept for the pass
   * ({@link PassCache}): the partition stage and the serving evidence of the same pass ask again.
   */
  public static HostProfile of(PlanInputs in, String model, String version, String host, String pool) {
    Profile own = Plans.profile(in, model, version, host, pool);
    if (own != null) {
      return new HostProfile(own, null);
    }
    HostEnvironment env = in.hosts().get(host);
    if (!pool.equals(Plans.CPU) || env == null || !hasBaseline(env)
        || DefaultPlacements.measuredOn(in, model, version, host)) {
      return null;
    }
    return in.predictions().predicted(model, version, host, () -> predict(in, model, version, host));
  }

  /** The prediction of a host with a baseline and no timing of the version: see {@link #of}. */
  private static HostProfile predict(PlanInputs in, String model, String version, String host) {
    Set<String> measuring = in.hostsMeasuring(model);
    if (measuring.isEmpty()) {
      return null;
    }
    HostFacts target = in.factsOf(host);
    SimilarHosts order = SimilarHosts.of(in, host);
    for (int place : order.walk(measuring)) {
      String there = order.hosts().get(place);
      if (!in.measuredVersions(model, there).contains(version) || !hasBaseline(in.hosts().get(there))) {
        continue;
      }
      Profile profile = Plans.profile(in, model, version, there, Plans.CPU);
      if (profile == null || !target.providers().contains(profile.provider()) || profile.points().isEmpty()) {
        continue;
      }
      // The most similar usable source: predict from it alone gives what predict from all gives.
      ProfilePrediction.Source source = new ProfilePrediction.Source(order.facts().get(place), profile.provider(),
          profile.batch(), profile.points());
      return ProfilePrediction.predict(target, List.of(source))
          .map(p -> new HostProfile(new Profile(p.provider(), p.batch(), p.points()), p))
          .orElse(null);
    }
    return null;
  }

  /**
   * What {@link #of} derived in one pass: each target host's other hosts in similarity order
   * ({@link SimilarHosts}, which version choice walks too) and each prediction made. The input
   * tables drop it at every change ({@link InputTables#put}), so it never outlives the inputs it was
   * made from; within a pass the inputs do not change.
   */
  static final class PassCache {
    private final Map<String, SimilarHosts> candidates = new HashMap<>();
    private final Map<String, Optional<HostProfile>> predicted = new HashMap<>();

    SimilarHosts candidates(String host, Supplier<SimilarHosts> make) {
      SimilarHosts c = candidates.get(host);
      if (c == null) {
        c = make.get();
        candidates.put(host, c);
      }
      return c;
    }

    HostProfile predicted(String model, String version, String host, Supplier<HostProfile> make) {
      String key = Keys.partition(model, version, host, Plans.CPU);
      Optional<HostProfile> p = predicted.get(key);
      if (p == null) {
        p = Optional.ofNullable(make.get());
        predicted.put(key, p);
      }
      return p.orElse(null);
    }

    void clear() {
      candidates.clear();
      predicted.clear();
    }
  }

  /**
   * Whether a host published its baseline score: without one the ratio of scores means nothing
   * (the profiler publishes the environment once before its baseline, so that a host is served at
   * once), and a plan scaled by it would be wrong by orders of magnitude, where the default
   * placement is merely unmeasured.
   */
  static boolean hasBaseline(HostEnvironment env) {
    return env.getBaseline() != null && env.getBaseline().getThroughput() > 0
        && Double.isFinite(env.getBaseline().getThroughput());
  }
}
