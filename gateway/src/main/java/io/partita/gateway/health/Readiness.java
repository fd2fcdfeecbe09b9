package io.partita.gateway.health;

import io.partita.common.health.Loops;
import io.partita.gateway.routing.Routing;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Whether the gateway can serve, and if not, why: the one decision behind
 * {@code /v2/health/ready} and the model ready endpoints, whatever the transport. No HTTP and no
 * Kafka here.
 *
 * <p>The gateway is ready when every one of its loops ({@link GatewayLoops}) is alive and caught
 * up, routing can decide, and at least one offered service model would be routed; a model is ready
 * when every loop is ready and that model would be routed. A verdict that is not ready names the
 * first thing that failed ({@code "loop 'gateway-replies' died: OutOfMemoryError: ..."}).
 *
 * <p>To make readiness stricter (say, every catalog model must be routable), add a {@link Check}
 * with {@link #withServerCheck}; the checks run in order and the first problem is the answer.
 */
public final class Readiness {
  /** A readiness answer: ready, or the reason it is not. */
  public record Verdict(boolean ready, String reason) {
    public static final Verdict READY = new Verdict(true, null);

    public static Verdict notReady(String reason) {
      return new Verdict(false, reason);
    }
  }

  /** One condition: empty when met, else the reason it is not. */
  @FunctionalInterface
  public interface Check {
    Optional<String> problem();
  }

  private final Loops loops;
  private final Routing routing;
  private final Supplier<? extends Collection<String>> offered;
  private final List<Check> extra;
  private final List<Check> serverChecks;

  /**
   * @param loops the gateway's loops
   * @param routing how requests are routed (in {@code plan} mode, whether a model has a ready instance)
   * @param offered the service models this gateway offers
   */
  public Readiness(Loops loops, Routing routing, Collection<String> offered) {
    this(loops, routing, fixed(Set.copyOf(offered)), List.of());
  }

  /**
   * @param offered the service models this gateway offers now (read on every check: a gateway
   *     following the catalog offers what it holds at that moment)
   */
  public Readiness(Loops loops, Routing routing, Supplier<? extends Collection<String>> offered) {
    this(loops, routing, offered, List.of());
  }

  private static Supplier<Set<String>> fixed(Set<String> offered) {
    return () -> offered;
  }

  private Readiness(Loops loops, Routing routing, Supplier<? extends Collection<String>> offered, List<Check> extra) {
    this.loops = loops;
    this.routing = routing;
    this.offered = offered;
    this.extra = List.copyOf(extra);
    List<Check> checks = new ArrayList<>();
    checks.add(loops::notReady);
    checks.add(() -> routing.ready() ? Optional.empty()
        : Optional.of("the route table has not been read up to its end yet (" + routing.mode().setting() + " routing)"));
    checks.add(() -> offered.get().stream().anyMatch(routing::ready) ? Optional.empty()
        : Optional.of(offered.get().isEmpty() ? "no service model is offered (the model repository or the catalog holds none)"
            : "no offered model has a ready instance in its route (is the planner running, are workers up?)"));
    checks.addAll(extra);
    this.serverChecks = List.copyOf(checks);
  }

  /** A readiness with one more server check, run after the existing ones. */
  public Readiness withServerCheck(Check check) {
    List<Check> more = new ArrayList<>(extra);
    more.add(check);
    return new Readiness(loops, routing, offered, more);
  }

  /** Whether the gateway as a whole can take calls. */
  public Verdict server() {
    for (Check check : serverChecks) {
      Optional<String> problem = check.problem();
      if (problem.isPresent()) {
        return Verdict.notReady(problem.get());
      }
    }
    return Verdict.READY;
  }

  /** Whether calls for this (known) service model can be served now. */
  public Verdict model(String serviceModel) {
    Optional<String> loop = loops.notReady();
    if (loop.isPresent()) {
      return Verdict.notReady(loop.get());
    }
    if (!routing.ready()) {
      return Verdict.notReady("the route table has not been read up to its end yet");
    }
    if (!routing.ready(serviceModel)) {
      return Verdict.notReady("model '" + serviceModel + "' has no ready instance in its route");
    }
    return Verdict.READY;
  }
}
