package io.partita.gateway.dashboard;

/**
 * One open live stream to a browser (server-sent events), independent of the HTTP server that
 * carries it. The dashboard calls {@link #send} from its push thread only; the transport adapter
 * frames each event as {@code event: NAME\ndata: JSON\n\n}.
 */
public interface EventSink {
  /** Sends one event; false when the client has gone (the dashboard then forgets this sink). */
  boolean send(String event, String json);

  /** Runs {@code action} once when the transport knows the client has gone. */
  void onClose(Runnable action);
}
