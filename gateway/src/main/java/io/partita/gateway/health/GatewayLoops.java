package io.partita.gateway.health;

import io.partita.common.health.LoopGuard;
import io.partita.common.health.Loops;
import io.partita.common.log.RateLimitedLog;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongSupplier;
import org.slf4j.LoggerFactory;

/**
 * The gateway's long-running loops, by name, each with its {@link LoopGuard}. Readiness
 * ({@link Readiness}) and the loop metrics read the same registry, so {@code /v2/health/ready}
 * cannot say 200 while a loop is dead. All loop names are here.
 */
public final class GatewayLoops {
  /** Reads the reply topic and completes the waiting calls (thread {@code partita-gateway-replies}). */
  public static final String REPLIES = "gateway-replies";
  /** Reads {@code <p>.plan.routes} ({@code gateway.routing=plan} only). */
  public static final String ROUTES = "gateway-routes";
  /** Follows {@code <p>.jobs.status} (jobs on only). */
  public static final String JOB_STATUS = "gateway-jobs-status";
  /** Takes part in the job leader election and runs jobs when leading (jobs on only). */
  public static final String JOB_LEADER = "gateway-jobs-leader";
  /** Follows {@code <p>.catalog.models} and {@code <p>.catalog.services} (a gateway without a model repository only). */
  public static final String CATALOG = "gateway-catalog";
  /** Reports demand to {@code <p>.demand} ({@code gateway.demand.interval.ms} > 0 only). */
  public static final String DEMAND = "gateway-demand";

  /** Default interval of the warning summaries: one line per cause per minute. */
  public static final long WARNING_INTERVAL_MS = 60_000;

  private final Loops loops = new Loops();
  private final RateLimitedLog warnings;
  private final List<LoopGuard> guards = new CopyOnWriteArrayList<>();

  public GatewayLoops() {
    this(WARNING_INTERVAL_MS, System::currentTimeMillis);
  }

  public GatewayLoops(long warningIntervalMs, LongSupplier clock) {
    this.warnings = new RateLimitedLog(LoggerFactory.getLogger(LoopGuard.class), warningIntervalMs, clock,
        RateLimitedLog.Telling.APPENDED);
  }

  /** Registers a loop (STARTING, so not ready, until it says it is). */
  public LoopGuard register(String name) {
    LoopGuard guard = new LoopGuard(loops.register(name), warnings);
    guards.removeIf(g -> g.name().equals(name));
    guards.add(guard);
    return guard;
  }

  public Loops loops() {
    return loops;
  }

  /** Every registered loop's guard, in registration order. */
  public List<LoopGuard> guards() {
    return List.copyOf(guards);
  }

  /** The shared warning summary (for tests and for warnings outside loops). */
  public RateLimitedLog warnings() {
    return warnings;
  }
}
