package io.partita.rules;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Main code names the types it uses in its imports, not inline as {@code java.util.Properties} in
 * the middle of a method: imports show a reader (and the module and package rules) what a file
 * depends on at a glance. A name that would clash with another of the same simple name may stay
 * qualified; {@link #ALLOWED} lists those, with the reason. Comments and string literals do not
 * count.
 */
class InlineQualifiedNamesTest {

  /** A lower-case package path followed by a type name, not preceded by a word or a dot. */
  private static final Pattern QUALIFIED = Pattern.compile("(?<![\\w.])((?:[a-z][a-z0-9_]*\\.)+)([A-Z]\\w*)");
  private static final Pattern HEADER = Pattern.compile("(?m)^(?:import|package)\\s+[^;]+;");

  /**
   * Qualified on purpose: the file also uses another type of the same simple name. Each entry is
   * "path relative to the repository: qualified name".
   */
  private static final List<String> ALLOWED = List.of(
      // Vert.x's transport and address beside java.net's and the JDK's of the same names
      "gateway/src/main/java/io/partita/gateway/server/AcceptGuard.java: io.vertx.core.transport.Transport",
      "gateway/src/main/java/io/partita/gateway/server/AcceptGuard.java: io.vertx.core.transport.Transport",
      "gateway/src/main/java/io/partita/gateway/server/AcceptGuard.java: io.vertx.core.net.SocketAddress",
      "gateway/src/main/java/io/partita/gateway/server/AcceptGuard.java: io.vertx.core.net.SocketAddress",
      // java.util.function.Consumer beside Kafka's Consumer
      "inference-worker/src/main/java/io/partita/worker/kafka/RequestLoop.java: java.util.function.Consumer",
      "inference-worker/src/main/java/io/partita/worker/kafka/RequestLoop.java: java.util.function.Consumer",
      "inference-worker/src/main/java/io/partita/worker/kafka/RequestLoop.java: java.util.function.Consumer",
      "inference-worker/src/main/java/io/partita/worker/kafka/RequestLoop.java: java.util.function.Consumer",
      // the pure planner's records beside the Avro records of the same names
      "planner-stream/src/main/java/io/partita/planner/plan/VersionPlans.java: io.partita.planning.version.ModelVersion",
      "planner-stream/src/main/java/io/partita/planner/plan/VersionPlans.java: io.partita.planning.version.ModelVersion",
      "planner-stream/src/main/java/io/partita/planner/plan/MappingPlans.java: io.partita.planning.mapping.ServiceMapping",
      "profiler-worker/src/main/java/io/partita/profiler/env/ProviderProbe.java: io.partita.runtime.Provider");

  @Test
  void shouldNameTypesInImportsNotInlineInMainCode() throws IOException {
    Path root = Path.of("..").toAbsolutePath().normalize();
    List<String> found = new ArrayList<>();
    try (Stream<Path> modules = Files.list(root)) {
      for (Path main : modules.map(m -> m.resolve("src/main/java")).filter(Files::isDirectory).toList()) {
        try (Stream<Path> files = Files.walk(main)) {
          files.filter(f -> f.toString().endsWith(".java")).sorted().forEach(f -> found.addAll(qualifiedIn(root, f)));
        }
      }
    }
    ALLOWED.forEach(found::remove);
    assertThat(found).as("inline qualified type names in main code (import them)").isEmpty();
  }

  @Test
  void shouldFindAQualifiedNameInCodeButNotInACommentOrAString() {
    String source = """
        package a.b;
        import java.util.List;
        class X {
          // java.util.Map in a comment
          String s = "java.util.Set in a string";
          java.util.Properties p = new java.util.Properties();
        }
        """;
    assertThat(qualified(source)).containsExactly("java.util.Properties", "java.util.Properties");
  }

  private static List<String> qualifiedIn(Path root, Path file) {
    try {
      String rel = root.relativize(file).toString();
      return qualified(Files.readString(file)).stream().map(q -> rel + ": " + q).toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static List<String> qualified(String source) {
    String code = codeOnly(source);
    Matcher header = HEADER.matcher(code);
    int body = 0;
    while (header.find()) {
      body = header.end();
    }
    List<String> out = new ArrayList<>();
    Matcher m = QUALIFIED.matcher(code);
    m.region(body, code.length());
    while (m.find()) {
      out.add(m.group(1) + m.group(2));
    }
    return out;
  }

  /** The source with comments and string and character literals blanked (same length). */
  static String codeOnly(String s) {
    char[] out = s.toCharArray();
    int n = s.length();
    int i = 0;
    while (i < n) {
      int end;
      if (s.startsWith("//", i)) {
        end = s.indexOf('\n', i);
        end = end < 0 ? n : end;
      } else if (s.startsWith("/*", i)) {
        end = s.indexOf("*/", i + 2);
        end = end < 0 ? n : end + 2;
      } else if (s.startsWith("\"\"\"", i)) {
        end = s.indexOf("\"\"\"", i + 3);
        end = end < 0 ? n : end + 3;
      } else if (s.charAt(i) == '"' || s.charAt(i) == '\'') {
        char quote = s.charAt(i);
        end = i + 1;
        while (end < n && s.charAt(end) != quote) {
          end += s.charAt(end) == '\\' ? 2 : 1;
        }
        end = Math.min(end + 1, n);
      } else {
        i++;
        continue;
      }
      for (int k = i; k < end; k++) {
        if (out[k] != '\n') {
          out[k] = ' ';
        }
      }
      i = end;
    }
    return new String(out);
  }
}
