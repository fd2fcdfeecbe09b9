package io.partita.worker.kafka;

import java.util.Optional;
import java.util.function.Function;

/**
 * Whether a request read from a base model's topic belongs there: its record's {@code serviceModel}
 * is a service model of that base model (a model served without weight files is its own service
 * model), and its {@code service-model} header, when present, agrees with the record. Pure.
 */
final class RequestTopicCheck {
  private RequestTopicCheck() {}

  /**
   * @param topicBaseModel the base model the topic carries
   * @param header the {@code service-model} header, or null
   * @param serviceModel the record's service model
   * @param baseModelOf the base model of a known service model
   * @return why the request is refused ({@code BAD_INPUT}), or null when it belongs on the topic
   */
  static String problem(String topicBaseModel, String header, String serviceModel, Function<String, Optional<String>> baseModelOf) {
    if (header != null && !header.equals(serviceModel)) {
      return "the service-model header '" + header + "' differs from the record's serviceModel '" + serviceModel
          + "'; set both to the service model asked for";
    }
    Optional<String> base = baseModelOf.apply(serviceModel);
    if (base.isEmpty()) {
      // an unknown service model is answered NOT_FOUND by the router when it names the topic's model
      return serviceModel.equals(topicBaseModel) ? null
          : "serviceModel '" + serviceModel + "' is not a service model of base model '" + topicBaseModel
              + "' (the topic's); unknown here";
    }
    if (!base.get().equals(topicBaseModel)) {
      return "serviceModel '" + serviceModel + "' is built on base model '" + base.get() + "'; produce it to the request topic of '"
          + base.get() + "', not of '" + topicBaseModel + "'";
    }
    return null;
  }
}
