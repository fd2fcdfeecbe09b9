package io.partita.common;

/** One running part of Partita (worker, gateway, planner, profiler): started once, closed once. */
public interface Service extends AutoCloseable {
  /** Starts the service; returns when it is ready to work. Failures are thrown, never swallowed. */
  void start() throws Exception;

  /** Stops the service, finishing or handing back the work it holds. Safe to call twice. */
  @Override
  void close();
}
