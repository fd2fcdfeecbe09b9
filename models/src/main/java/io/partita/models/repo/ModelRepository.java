package io.partita.models.repo;

import io.partita.models.lora.LoraAdapter;
import io.partita.models.lora.LoraAdapterFormat;
import io.partita.models.lora.LoraAdapterReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Scans a model repository laid out as {@code <repo>/<model>/<version>/model.onnx}, with an optional
 * manifest {@code <repo>/<model>/model.yaml} (see {@link ManifestReader}).
 *
 * <p>What the scan guarantees about the index it returns: every version's {@code model.onnx} loads
 * in ONNX Runtime and all versions of a model have the same signature; every version the manifest
 * declares exists; every weight file is inside the root (symlinks included), exists and has the
 * declared sha256; a weight file in ONNX Runtime's LoRA adapter format names only overridable
 * parameters of the model, with fitting shapes; service model names are unique across the
 * repository. Anything else is a {@link RepositoryException} naming the file and field.
 * Directories starting with '.' are ignored, and so is a directory holding neither versions nor a
 * manifest; a subdirectory of a model without a {@code model.onnx} (such as {@code adapters/}) is
 * not a version.
 *
 * <p>Every version is opened in ONNX Runtime once to read its signature, so a scan costs roughly a
 * session load per version.
 */
public final class ModelRepository {

  /** The model file name inside a version directory. */
  public static final String MODEL_FILE = "model.onnx";

  private static final Logger log = LoggerFactory.getLogger(ModelRepository.class);

  private ModelRepository() {}

  public static RepositoryIndex scan(Path root) {
    if (!Files.isDirectory(root)) {
      throw new RepositoryException(root, null, "the model repository root is not a directory");
    }
    Path absRoot = root.toAbsolutePath().normalize();
    Map<String, ModelEntry> models = new TreeMap<>();
    Map<String, ServiceModelEntry> services = new TreeMap<>();
    Map<String, Path> serviceDeclaredIn = new LinkedHashMap<>();
    for (Path dir : children(absRoot)) {
      Optional<ModelEntry> model = scanModel(absRoot, dir);
      if (model.isEmpty()) {
        continue;
      }
      ModelEntry m = model.get();
      models.put(m.name(), m);
      for (ServiceModelEntry s : m.serviceModels()) {
        Path where = m.manifest().orElse(m.dir());
        Path earlier = serviceDeclaredIn.putIfAbsent(s.name(), where);
        if (earlier != null) {
          throw new RepositoryException(
              where,
              "serviceModels." + s.name(),
              "service model '" + s.name() + "' is already defined by " + earlier
                  + "; service model names must be unique in the repository");
        }
        services.put(s.name(), s);
      }
    }
    // DEBUG: partita local rescans the repository every 2 s; what changed is logged by whoever
    // acts on it (the catalog sync, the worker's start line)
    log.debug("Scanned model repository {}: {} models, {} service models", absRoot, models.size(),
        services.size());
    return new RepositoryIndex(absRoot, models, services);
  }

  private static Optional<ModelEntry> scanModel(Path root, Path dir) {
    String name = dir.getFileName().toString();
    Optional<ModelManifest> manifest = ManifestReader.readFrom(dir);
    List<Path> versionDirs = new ArrayList<>();
    for (Path v : children(dir)) {
      if (Files.isRegularFile(v.resolve(MODEL_FILE))) {
        versionDirs.add(v);
      }
    }
    if (versionDirs.isEmpty() && manifest.isEmpty()) {
      log.debug("Ignoring {}: no <version>/{} and no manifest", dir, MODEL_FILE);
      return Optional.empty();
    }
    if (!Names.isValid(name)) {
      throw new RepositoryException(dir, null, "model directory name must be " + Names.rule());
    }
    if (versionDirs.isEmpty()) {
      throw new RepositoryException(
          manifest.get().file(), null,
          "model '" + name + "' has a manifest but no version directory with a " + MODEL_FILE
              + " (expected " + dir.resolve("1").resolve(MODEL_FILE) + ")");
    }
    versionDirs.sort(Comparator.comparing(ModelRepository::versionKey));

    Map<String, ModelManifest.Version> declared =
        manifest.map(ModelManifest::versions).orElse(Map.of());
    List<String> onDisk = versionDirs.stream().map(p -> p.getFileName().toString()).toList();
    for (String v : declared.keySet()) {
      if (!onDisk.contains(v)) {
        throw new RepositoryException(
            manifest.get().file(), "versions." + v,
            "unknown version '" + v + "': there is no " + dir.resolve(v).resolve(MODEL_FILE)
                + "; versions on disk: " + onDisk);
      }
    }

    Map<String, VersionEntry> versions = new LinkedHashMap<>();
    VersionEntry first = null;
    for (Path vdir : versionDirs) {
      String id = vdir.getFileName().toString();
      if (!Names.isValid(id)) {
        throw new RepositoryException(vdir, null, "version directory name must be " + Names.rule());
      }
      ModelManifest.Version spec = declared.getOrDefault(id, ModelManifest.Version.defaults());
      VersionEntry entry = scanVersion(root, name, id, vdir.resolve(MODEL_FILE), spec, manifest);
      if (first == null) {
        first = entry;
      } else if (!first.signature().equals(entry.signature())) {
        throw new RepositoryException(
            entry.modelFile(), null,
            "version " + id + " answers " + entry.signature() + " but version " + first.version()
                + " answers " + first.signature() + "; all versions of a model must have the same"
                + " inputs and outputs");
      }
      versions.put(id, entry);
    }

    List<ServiceModelEntry> services = new ArrayList<>();
    Map<String, ModelManifest.ServiceModel> declaredServices =
        manifest.map(ModelManifest::serviceModels).orElse(Map.of());
    if (declaredServices.isEmpty()) {
      services.add(new ServiceModelEntry(name, name, Optional.empty()));
    } else {
      Path file = manifest.get().file();
      ModelSignature signature = first.signature();
      declaredServices.forEach(
          (serviceName, spec) ->
              services.add(
                  new ServiceModelEntry(
                      serviceName, name, weightFile(root, file, serviceName, spec, signature),
                      spec.instances(), spec.requirements())));
    }
    return Optional.of(
        new ModelEntry(name, dir, manifest.map(ModelManifest::file), versions, services));
  }

  private static VersionEntry scanVersion(
      Path root, String model, String id, Path file, ModelManifest.Version spec,
      Optional<ModelManifest> manifest) {
    // The model file goes through the same containment check as weight files, so a version
    // directory or model.onnx that is a symlink out of the repository is refused.
    String rel = model + "/" + id + "/" + MODEL_FILE;
    Path real = WeightFiles.resolveInside(root, rel);
    String sha = hash(real);
    if (spec.sha256().isPresent() && !spec.sha256().get().equals(sha)) {
      throw new RepositoryException(
          manifest.get().file(), "versions." + id + ".sha256",
          "declared " + spec.sha256().get() + " but " + file + " has sha256 " + sha);
    }
    ModelSignature signature;
    try {
      signature = ModelSignature.read(real);
    } catch (IOException e) {
      throw new RepositoryException(file, null, "cannot read it as an ONNX model: " + e.getMessage(), e);
    }
    return new VersionEntry(
        model, id, real, rel, sha, spec.precision(), spec.providers(), spec.accuracy(),
        spec.memoryBytes(), signature);
  }

  private static Optional<WeightFile> weightFile(
      Path root, Path manifestFile, String serviceName, ModelManifest.ServiceModel spec,
      ModelSignature signature) {
    if (spec.weightFile().isEmpty()) {
      return Optional.empty();
    }
    String field = "serviceModels." + serviceName;
    String rel = spec.weightFile().get();
    Path path;
    try {
      path = WeightFiles.resolveInside(root, rel);
    } catch (UnsafePathException e) {
      throw new RepositoryException(manifestFile, field + ".weightFile", e.getMessage(), e);
    }
    if (!Files.isRegularFile(path)) {
      throw new RepositoryException(
          manifestFile, field + ".weightFile",
          "missing weight file: " + path + " does not exist or is not a regular file");
    }
    String sha = hash(path);
    String want = spec.sha256().orElseThrow();
    if (!want.equals(sha)) {
      throw new RepositoryException(
          manifestFile, field + ".sha256",
          "declared " + want + " but " + path + " has sha256 " + sha);
    }
    checkAdapterFits(manifestFile, field + ".weightFile", path, signature);
    return Optional.of(new WeightFile(rel, path, sha));
  }

  /**
   * A weight file in ONNX Runtime's adapter format is read and checked against the model's
   * overridable parameters now, because ONNX Runtime would only fail on the first request.
   */
  private static void checkAdapterFits(
      Path manifestFile, String field, Path path, ModelSignature signature) {
    byte[] bytes;
    try {
      bytes = Files.readAllBytes(path);
    } catch (IOException e) {
      throw new RepositoryException(path, null, "cannot be read: " + e, e);
    }
    if (bytes.length < 8
        || !LoraAdapterFormat.FILE_IDENTIFIER.equals(
            new String(bytes, 4, 4, StandardCharsets.US_ASCII))) {
      return;
    }
    LoraAdapter adapter;
    try {
      adapter = LoraAdapterReader.fromBytes(bytes);
    } catch (IllegalArgumentException e) {
      throw new RepositoryException(
          manifestFile, field, path + " is not a valid LoRA adapter: " + e.getMessage(), e);
    }
    signature
        .checkAdapter(adapter)
        .ifPresent(
            problem -> {
              throw new RepositoryException(
                  manifestFile, field, path + " does not fit the model: " + problem);
            });
  }

  private static String hash(Path file) {
    try {
      return Sha256.of(file);
    } catch (IOException e) {
      throw new RepositoryException(file, null, "cannot be read: " + e, e);
    }
  }

  private static List<Path> children(Path dir) {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(Files::isDirectory)
          .filter(p -> !p.getFileName().toString().startsWith("."))
          .sorted()
          .toList();
    } catch (IOException e) {
      throw new RepositoryException(dir, null, "cannot be listed: " + e, e);
    }
  }

  private static String versionKey(Path p) {
    return versionKey(p.getFileName().toString());
  }

  /**
   * The order of versions everywhere (a scan, and readers of the catalog): numeric ids first, in
   * numeric order, then the rest by name. Compare the keys as strings.
   */
  public static String versionKey(String s) {
    if (s.matches("[0-9]{1,18}")) {
      return "0" + String.format("%019d", Long.parseLong(s));
    }
    return "1" + s;
  }
}
