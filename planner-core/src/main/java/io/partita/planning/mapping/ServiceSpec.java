package io.partita.planning.mapping;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** A service: its models in pipeline order (OCR = detect, classify, recognize), each with a rate. */
public record ServiceSpec(String id, List<ServiceStage> stages) {
  public ServiceSpec {
    if (id == null || id.isBlank()) {
      throw new IllegalArgumentException("service id: must not be blank");
    }
    if (stages == null || stages.isEmpty()) {
      throw new IllegalArgumentException("service " + id + " models: must hold at least one model");
    }
    Set<String> seen = new HashSet<>();
    for (ServiceStage s : stages) {
      if (!seen.add(s.modelId())) {
        throw new IllegalArgumentException("service " + id + " models: " + s.modelId() + " is given twice");
      }
    }
    stages = List.copyOf(stages);
  }
}
