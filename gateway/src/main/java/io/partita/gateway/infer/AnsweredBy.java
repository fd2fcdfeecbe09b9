package io.partita.gateway.infer;

/**
 * Where a request ran, from the reply's {@code instance} ({@code host/slot}): what an infer answer
 * reports in its {@code parameters}, over HTTP and gRPC alike, as {@value #HOST} and
 * {@value #SLOT}.
 */
public record AnsweredBy(String host, String slot) {
  public static final String HOST = "partita_host";
  public static final String SLOT = "partita_slot";

  /**
   * The host and slot of a reply's {@code instance}; null when the reply names none (a reply from
   * an older worker) or not as {@code host/slot}. Slot ids hold no '/', so the last one splits.
   */
  public static AnsweredBy of(String instance) {
    if (instance == null) {
      return null;
    }
    int cut = instance.lastIndexOf('/');
    if (cut <= 0 || cut == instance.length() - 1) {
      return null;
    }
    return new AnsweredBy(instance.substring(0, cut), instance.substring(cut + 1));
  }
}
