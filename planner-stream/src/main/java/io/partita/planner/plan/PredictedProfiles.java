package io.partita.planner.plan;

import io.partita.avro.HostEnvironment;
import io.partita.planner.plan.Plans.Profile;
import io.partita.planning.version.HostFacts;
import io.partita.planning.version.ProfilePrediction;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

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
    HostFacts target = Plans.hostOf(env);
    List<ProfilePrediction.Source> sources = new ArrayList<>();
    for (Map.Entry<String, HostEnvironment> other : in.hosts().entrySet()) {
      if (other.getKey().equals(host) || !hasBaseline(other.getValue())) {
        continue;
      }
      Profile there = Plans.profile(in, model, version, other.getKey(), pool);
      if (there != null) {
        sources.add(new ProfilePrediction.Source(Plans.hostOf(other.getValue()), there.provider(), there.batch(),
            there.points()));
      }
    }
    return ProfilePrediction.predict(target, sources)
        .map(p -> new HostProfile(new Profile(p.provider(), p.batch(), p.points()), p))
        .orElse(null);
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
