package io.partita.launcher;

import io.partita.common.Service;
import io.partita.common.config.Settings;
import io.partita.common.lifecycle.Closer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts services in order and stops them in reverse order, once, on Ctrl-C (JVM shutdown) or on
 * {@link #close}. The start-up block every command would otherwise repeat. The stopping is a
 * {@link Closer}, the same as inside each service; a service that fails to stop is logged by name
 * and the others are stopped all the same.
 */
final class Services implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Services.class);

  private final Closer started = new Closer("launcher");
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
    add(service);
    return service;
  }

  /**
   * Starts the services at once, each on its own thread (the first on the caller's), and returns
   * when all are started; they are registered in the given order, so they stop in reverse order as
   * if started one after another. For services that do not need each other to start (the worker
   * and the gateway: a request produced before the worker consumes waits in its topic). If any
   * start fails, everything started so far is stopped and the first failure is thrown.
   */
  void startTogether(List<? extends Service> services) throws Exception {
    Throwable[] failures = new Throwable[services.size()];
    List<Thread> threads = new ArrayList<>();
    for (int i = 1; i < services.size(); i++) {
      int index = i;
      Service service = services.get(i);
      Thread thread = new Thread(() -> failures[index] = startOrFailure(service),
          "partita-start-" + service.getClass().getSimpleName());
      thread.setDaemon(true);
      thread.start();
      threads.add(thread);
    }
    failures[0] = startOrFailure(services.get(0));
    for (Thread thread : threads) {
      thread.join(); // join() also makes each thread's write to failures visible here
    }
    Throwable first = null;
    for (int i = 0; i < services.size(); i++) {
      if (failures[i] == null) {
        add(services.get(i));
      } else if (first == null) {
        first = failures[i];
      }
    }
    if (first != null) {
      close();
      if (first instanceof Exception e) {
        throw e;
      }
      throw new IllegalStateException(first);
    }
  }

  private static Throwable startOrFailure(Service service) {
    try {
      service.start();
      return null;
    } catch (Exception | Error e) {
      return e;
    }
  }

  /** Registers something already started (the embedded broker) to be closed in order. */
  void add(AutoCloseable resource) {
    started.register(resource.getClass().getSimpleName(), resource);
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
  public void close() {
    try {
      started.close();
    } catch (RuntimeException e) {
      // already logged, with the name of each service that failed to stop; a shutdown goes on
    } finally {
      stopped.countDown();
    }
  }
}
