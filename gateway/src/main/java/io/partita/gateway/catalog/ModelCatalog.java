package io.partita.gateway.catalog;

import io.partita.models.repo.RepositoryIndex;

/**
 * The models this gateway offers, as a snapshot that may change while it runs: either a model
 * repository scanned once at start ({@link #fixed}) or the catalog topics followed by a
 * {@link CatalogReader} ({@link CatalogView}). The HTTP and gRPC paths, jobs, routing and readiness
 * read {@link #current()} on every call, so a model added to or removed from the catalog is offered
 * or refused (404) from the next call on.
 */
@FunctionalInterface
public interface ModelCatalog {

  /** The models and service models offered now; never null. */
  RepositoryIndex current();

  /** A catalog that never changes: a repository scanned at start. */
  static ModelCatalog fixed(RepositoryIndex index) {
    return () -> index;
  }

  /** The base model of a service model, or the name itself when it is not (or no longer) offered. */
  default String baseModelOf(String serviceModel) {
    return current().serviceModel(serviceModel).map(s -> s.baseModel()).orElse(serviceModel);
  }
}
