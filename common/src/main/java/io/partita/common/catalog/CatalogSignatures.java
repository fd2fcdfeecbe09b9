package io.partita.common.catalog;

import io.partita.avro.ModelVersion;
import io.partita.avro.TensorSignature;
import io.partita.models.repo.ElementType;
import io.partita.models.repo.ModelSignature;
import io.partita.models.repo.TensorSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Converts a model version's inputs and outputs between the repository's {@link ModelSignature}
 * (read from the file) and the catalog's {@link TensorSignature} lists, so that a reader of
 * {@code <prefix>.catalog.models} (a gateway without the files) knows what to validate and what
 * metadata to answer. Both directions keep names, order, Open Inference Protocol datatypes and
 * shapes ({@code -1} for a dynamic dimension). Pure.
 */
public final class CatalogSignatures {

  private CatalogSignatures() {}

  public static List<TensorSignature> toCatalog(List<TensorSpec> specs) {
    List<TensorSignature> out = new ArrayList<>();
    for (TensorSpec t : specs) {
      out.add(TensorSignature.newBuilder().setName(t.name()).setDatatype(t.type().oipDatatype())
          .setShape(List.copyOf(t.shape())).build());
    }
    return out;
  }

  /**
   * The signature a catalog record carries; empty for a record written before {@code ModelVersion}
   * v2 (no inputs), whose reader must then read the file.
   *
   * @throws IllegalArgumentException naming the version and field when a datatype is not an Open
   *     Inference Protocol one
   */
  public static Optional<ModelSignature> fromCatalog(ModelVersion v) {
    if (v.getInputs().isEmpty()) {
      return Optional.empty();
    }
    String where = v.getModel() + "/" + v.getVersion();
    return Optional.of(new ModelSignature(specs(v.getInputs(), where + ".inputs"), specs(v.getOutputs(), where + ".outputs")));
  }

  private static List<TensorSpec> specs(List<TensorSignature> list, String where) {
    List<TensorSpec> out = new ArrayList<>();
    for (int i = 0; i < list.size(); i++) {
      TensorSignature t = list.get(i);
      String at = where + "[" + i + "].datatype";
      ElementType type = ElementType.fromOipDatatype(t.getDatatype()).orElseThrow(() ->
          new IllegalArgumentException(at + ": '" + t.getDatatype() + "' is not an Open Inference Protocol datatype"));
      out.add(new TensorSpec(t.getName(), type, t.getShape()));
    }
    return out;
  }
}
