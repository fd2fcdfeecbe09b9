package io.partita.common.lifecycle;

import java.util.ArrayDeque;
import java.util.Deque;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The resources of one service (clients, threads, executors, servers), registered as they are
 * started and closed in reverse order: what was started last, and may use what was started before
 * it, stops first. Closing goes on past a failure, so one resource that fails to close never
 * leaves the others open; each failure is logged with the resource's name, and the first is
 * rethrown with the later ones suppressed on it.
 *
 * <p>Every resource is closed once: {@link #close} empties the stack, so closing twice (a failed
 * start, then the owner's own close; a shutdown hook, then a command's) does nothing the second
 * time. A resource registered after {@link #close} waits for the next close. Thread-safe.
 *
 * <p>It does not time resources out: a step that waits for a thread says how long itself.
 */
public final class Closer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Closer.class);

  /** One step of the shutdown, named for the log. */
  private record Entry(String name, AutoCloseable resource) {}

  private final String owner;
  private final Deque<Entry> stack = new ArrayDeque<>();

  /** @param owner what the resources belong to, for the log ("gateway", "inference worker") */
  public Closer(String owner) {
    this.owner = owner;
  }

  /**
   * Registers {@code resource} to be closed before everything registered earlier; returns it, so a
   * field can be set and registered in one statement. A lambda or method reference registers a
   * step that is not an {@link AutoCloseable} itself ({@code executor::shutdownNow}).
   */
  public synchronized <T extends AutoCloseable> T register(String name, T resource) {
    stack.push(new Entry(name, resource));
    return resource;
  }

  /** How many resources wait to be closed. */
  public synchronized int size() {
    return stack.size();
  }

  /**
   * Closes every registered resource, the last registered first. A failure is logged with the
   * resource's name and closing goes on; the first failure is then thrown (a checked one wrapped
   * in a {@link CloseException} naming the resource) with the later ones suppressed on it.
   */
  @Override
  public synchronized void close() {
    Throwable first = null;
    while (!stack.isEmpty()) {
      Entry entry = stack.pop();
      try {
        entry.resource().close();
      } catch (Exception | Error e) {
        log.warn("Closing {} of the {} failed: {}", entry.name(), owner, String.valueOf(e), e);
        if (first == null) {
          first = e instanceof RuntimeException || e instanceof Error ? e
              : new CloseException("closing " + entry.name() + " of the " + owner + " failed: " + e.getMessage(), e);
        } else {
          first.addSuppressed(e);
        }
      }
    }
    if (first instanceof RuntimeException r) {
      throw r;
    }
    if (first instanceof Error err) {
      throw err;
    }
  }

  /**
   * For a start that failed with {@code cause}: closes what it had started, adding any failure to
   * close to {@code cause} as suppressed; the caller then throws {@code cause}.
   */
  public void closeAfter(Throwable cause) {
    try {
      close();
    } catch (RuntimeException | Error e) {
      if (e != cause) {
        cause.addSuppressed(e);
      }
    }
  }

  /** A resource failed to close with a checked exception (its cause). */
  public static final class CloseException extends RuntimeException {
    public CloseException(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
