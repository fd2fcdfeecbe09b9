package io.partita.gateway.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.partita.gateway.health.Readiness;
import io.partita.gateway.refusal.SafeText;

/** A readiness verdict as the JSON of a health answer: {@code "ready"} and, when not, {@code "reason"}. */
public final class HealthJson {
  private HealthJson() {}

  /** Adds the verdict to {@code out} and returns it. */
  public static ObjectNode of(Readiness.Verdict verdict, ObjectNode out) {
    out.put("ready", verdict.ready());
    if (!verdict.ready()) {
      out.put("reason", SafeText.clean(verdict.reason()));
    }
    return out;
  }
}
