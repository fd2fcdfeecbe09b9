package io.partita.worker.serving;

import io.partita.avro.ErrorCode;
import io.partita.avro.InferenceError;
import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;

/** Builds error replies; every path that cannot run a request answers with one of these. */
public final class Replies {
  private Replies() {}

  public static InferenceReply error(InferenceRequest request, String version, ErrorCode code, String message, String instance) {
    return error(request.getId(), request.getServiceModel(), version, code, message, instance);
  }

  public static InferenceReply error(String id, String serviceModel, String version, ErrorCode code, String message, String instance) {
    return InferenceReply.newBuilder()
        .setId(id)
        .setServiceModel(serviceModel)
        .setModelVersion(version)
        .setError(new InferenceError(code, message))
        .setInstance(instance)
        .build();
  }

  /** The outcome label of a reply for metrics: OK or its error code. */
  public static String outcome(InferenceReply reply) {
    return reply.getError() == null ? "OK" : reply.getError().getCode().name();
  }
}
