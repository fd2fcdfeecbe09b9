package io.partita.models.repo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WeightFilesTest {

  @TempDir Path tmp;
  Path root;
  Path outside;

  @BeforeEach
  void layout() throws IOException {
    root = Files.createDirectories(tmp.resolve("repo"));
    outside = Files.createDirectories(tmp.resolve("elsewhere"));
    Files.writeString(outside.resolve("secret.bin"), "secret");
    Files.createDirectories(root.resolve("m/adapters"));
    Files.writeString(root.resolve("m/adapters/a.onnx_adapter"), "a");
  }

  @Test
  void shouldResolveAFileInsideTheRoot() throws IOException {
    assertThat(WeightFiles.resolveInside(root, "m/adapters/a.onnx_adapter"))
        .isEqualTo(root.toRealPath().resolve("m/adapters/a.onnx_adapter"));
    assertThat(WeightFiles.resolveInside(root, "m/./adapters/a.onnx_adapter"))
        .isEqualTo(root.toRealPath().resolve("m/adapters/a.onnx_adapter"));
  }

  @Test
  void shouldResolveAMissingFileUnderTheRootSoTheCallerCanReportIt() throws IOException {
    assertThat(WeightFiles.resolveInside(root, "m/adapters/new.onnx_adapter"))
        .isEqualTo(root.toRealPath().resolve("m/adapters/new.onnx_adapter"));
  }

  @Test
  void shouldRefuseDotDotSegments() {
    assertThatThrownBy(() -> WeightFiles.resolveInside(root, "../elsewhere/secret.bin"))
        .isInstanceOf(UnsafePathException.class)
        .hasMessageContaining("'..'")
        .hasMessageContaining("../elsewhere/secret.bin");
    assertThatThrownBy(() -> WeightFiles.resolveInside(root, "m/../m/adapters/a.onnx_adapter"))
        .isInstanceOf(UnsafePathException.class)
        .hasMessageContaining("'..'");
  }

  @Test
  void shouldRefuseAbsolutePaths() {
    String abs = outside.resolve("secret.bin").toString();
    assertThatThrownBy(() -> WeightFiles.resolveInside(root, abs))
        .isInstanceOf(UnsafePathException.class)
        .hasMessageContaining("absolute");
  }

  @Test
  void shouldRefuseEmptyPaths() {
    assertThatThrownBy(() -> WeightFiles.resolveInside(root, " "))
        .isInstanceOf(UnsafePathException.class)
        .hasMessageContaining("empty");
  }

  @Test
  void shouldRefuseAFileSymlinkThatPointsOutsideTheRoot() throws IOException {
    Files.createSymbolicLink(root.resolve("m/adapters/evil.onnx_adapter"),
        outside.resolve("secret.bin"));
    assertThatThrownBy(() -> WeightFiles.resolveInside(root, "m/adapters/evil.onnx_adapter"))
        .isInstanceOf(UnsafePathException.class)
        .hasMessageContaining("symbolic link")
        .hasMessageContaining(outside.toRealPath().toString());
  }

  @Test
  void shouldRefuseADirectorySymlinkThatPointsOutsideTheRootEvenForMissingFiles()
      throws IOException {
    Files.createSymbolicLink(root.resolve("m/linked"), outside);
    assertThatThrownBy(() -> WeightFiles.resolveInside(root, "m/linked/secret.bin"))
        .isInstanceOf(UnsafePathException.class);
    assertThatThrownBy(() -> WeightFiles.resolveInside(root, "m/linked/not-yet.bin"))
        .isInstanceOf(UnsafePathException.class);
  }

  @Test
  void shouldAcceptASymlinkThatStaysInsideTheRoot() throws IOException {
    Files.createSymbolicLink(root.resolve("m/alias.onnx_adapter"),
        root.resolve("m/adapters/a.onnx_adapter"));
    assertThat(WeightFiles.resolveInside(root, "m/alias.onnx_adapter"))
        .isEqualTo(root.toRealPath().resolve("m/adapters/a.onnx_adapter"));
  }

  @Test
  void shouldWorkWhenTheRootItselfIsASymlink() throws IOException {
    Path link = Files.createSymbolicLink(tmp.resolve("repo-link"), root);
    assertThat(WeightFiles.resolveInside(link, "m/adapters/a.onnx_adapter"))
        .isEqualTo(root.toRealPath().resolve("m/adapters/a.onnx_adapter"));
  }

  @Test
  void shouldHashFilesAsLowercaseHex() throws IOException {
    Path f = Files.writeString(tmp.resolve("abc.txt"), "abc");
    assertThat(Sha256.of(f))
        .isEqualTo("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        .isEqualTo(Sha256.of("abc".getBytes()));
    assertThat(Sha256.isValid(Sha256.of(f))).isTrue();
    assertThat(Sha256.isValid("BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"))
        .isFalse();
    assertThat(Sha256.isValid("abc")).isFalse();
  }
}
