package io.partita.models.repo;

import java.nio.file.Path;

/**
 * A weight file (a LoRA adapter) of a service model, checked at scan time: inside the repository,
 * present, and with the declared sha256.
 *
 * @param relativePath the path as the manifest gives it, relative to the repository root
 * @param path the resolved real path
 * @param sha256 its sha256
 */
public record WeightFile(String relativePath, Path path, String sha256) {}
