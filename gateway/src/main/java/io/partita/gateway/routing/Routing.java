package io.partita.gateway.routing;

import java.util.Locale;

/**
 * Where a request for a service model goes, decided before anything is produced. No Kafka here:
 * {@link PlanRouting} reads routes through a function, so it is tested without a broker.
 */
public interface Routing {

  /** How the gateway routes ({@code gateway.routing}). */
  enum Mode {
    /**
     * By {@code <prefix>.plan.routes}: only while a ready instance of the base model exists (else
     * 503 before producing), spread over the partitions the workers own by capacity.
     */
    PLAN,
    /** To the request topic without looking at any plan (Kafka's partitioner chooses the partition). */
    ANY;

    public String setting() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /**
   * Where to produce one request.
   *
   * @param instanceId the chosen instance, or null when no plan was consulted ({@code any})
   * @param partition the partition of the request topic to produce to, or null for Kafka's partitioner
   */
  record Target(String instanceId, Integer partition) {
    public static final Target ANY_PARTITION = new Target(null, null);
  }

  /** Chooses the target for one request of any version; throws {@link NotRoutableException} (answered 503) with the reason. */
  default Target choose(String serviceModel) {
    return choose(serviceModel, null);
  }

  /**
   * Chooses the target for one request; throws {@link NotRoutableException} (answered 503) with the
   * reason.
   *
   * @param version the version the request is pinned to, or null for whichever its instance runs
   */
  Target choose(String serviceModel, String version);

  /** Whether a request for this service model would be routed now. */
  boolean ready(String serviceModel);

  /** Whether routing can decide at all (in {@code plan} mode: the route table has been read up to its end once). */
  boolean ready();

  Mode mode();

  /**
   * Whether a refusal of this service model may pass by itself in a moment: the plan places
   * instances of it, none of them ready yet (a re-plan moving them, a slot still opening), so a
   * call may wait briefly rather than be refused at once.
   */
  default boolean settling(String serviceModel) {
    return false;
  }

  /** Routing that sends every request to its topic, as before routes existed. */
  static Routing any() {
    return new Routing() {
      @Override
      public Target choose(String serviceModel, String version) {
        return Target.ANY_PARTITION;
      }

      @Override
      public boolean ready(String serviceModel) {
        return true;
      }

      @Override
      public boolean ready() {
        return true;
      }

      @Override
      public Mode mode() {
        return Mode.ANY;
      }
    };
  }
}
