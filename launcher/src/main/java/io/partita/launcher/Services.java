package io.partita.launcher;

import io.partita.common.Service;
import io.partita.common.config.Settings;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts services in order and stops them in reverse order, once, on Ctrl-C (JVM shutdown) or on
 * {@link #close}. The start-up block every command would otherwise repeat.
 */
final class Services implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Services.class);

  private final Deque<AutoCloseable> started = new ArrayDeque<>();
  private final CountDownLatch stopped = new CountDownLatch(1);
  private final Thread hook = new Thread(this::close, "partita-shutdown");

  Services() {
    Runtime.getRuntime().addShutdownHook(hook);
  }

  <T extends Service> T start(T service) throws Exception {
    try {
      service.start();
    } catch (Exception e) {
      close();
      throw e;
    }
    started.push(service);
    return service;
  }

  /** Registers something already started (the embedded broker) to be closed in order. */
  void add(AutoCloseable resource) {
    started.push(resource);
  }

  /** Blocks until shutdown; returns the exit code. */
  int awaitShutdown() throws InterruptedException {
    stopped.await();
    return 0;
  }

  static void logSettings(String component, Settings settings) {
    log.info("Starting {} with settings {}", component, settings.masked());
  }

  @Override
  public synchronized void close() {
    while (!started.isEmpty()) {
      AutoCloseable resource = started.pop();
      try {
        resource.close();
      } catch (Exception e) {
        log.warn("Stopping {} failed: {}", resource.getClass().getSimpleName(), e.getMessage());
      }
    }
    stopped.countDown();
  }
}
