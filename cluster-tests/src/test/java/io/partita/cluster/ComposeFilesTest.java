package io.partita.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.common.config.Settings;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The deployment files in {@code compose/}: valid for docker-compose (checked with
 * {@code docker-compose config -q} when the binary is installed, skipped with a message otherwise;
 * {@code .ci/run} installs it where it can), and every {@code PARTITA_*} variable they set is a
 * setting documented in docs/deployment.md. No image is built or run here.
 */
class ComposeFilesTest {
  private static final Path COMPOSE = Path.of(System.getProperty("partita.compose.dir", "../compose")).toAbsolutePath().normalize();
  private static final Path DOCS = COMPOSE.resolveSibling("docs").resolve("deployment.md");
  private static final Pattern VARIABLE = Pattern.compile("\\b(PARTITA_[A-Z0-9_]+)\\s*[:=]");

  @Test
  void shouldValidateTheComposeFilesWithDockerCompose() throws Exception {
    Path binary = onPath("docker-compose");
    Assumptions.assumeTrue(binary != null,
        "docker-compose is not installed (Debian: apt-get install --no-install-recommends docker-compose); compose files not validated");
    for (List<String> files : List.of(List.of("docker-compose.yml"), List.of("docker-compose.yml", "docker-compose.gpu.yml"))) {
      List<String> command = new ArrayList<>(List.of(binary.toString()));
      files.forEach(f -> command.addAll(List.of("-f", COMPOSE.resolve(f).toString())));
      command.addAll(List.of("config", "-q"));
      Process process = new ProcessBuilder(command).directory(COMPOSE.toFile()).redirectErrorStream(true).start();
      String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("docker-compose config finished").isTrue();
      assertThat(process.exitValue()).as("docker-compose %s config -q: %s", files, output).isZero();
    }
  }

  @Test
  void shouldDocumentEverySettingTheComposeFilesSet() throws Exception {
    Set<String> variables = new TreeSet<>();
    for (String file : List.of("docker-compose.yml", "docker-compose.gpu.yml", "partita.env", "partita-compose.env", "Dockerfile")) {
      for (String line : Files.readAllLines(COMPOSE.resolve(file))) {
        Matcher m = VARIABLE.matcher(line.strip().startsWith("#") ? line.strip().substring(1) : line);
        while (m.find()) {
          variables.add(m.group(1));
        }
      }
    }
    assertThat(variables).contains("PARTITA_KAFKA_BOOTSTRAP_SERVERS", "PARTITA_SERDE_MODE", "PARTITA_MODEL_REPO");
    String docs = Files.readString(DOCS);
    for (String variable : variables) {
      // The launcher's own mapping (Settings.Builder.environment) from variable to setting key.
      String key = Settings.builder().environment(Map.of(variable, "x")).build().masked().keySet().iterator().next();
      assertThat(docs).as("docs/deployment.md documents %s (set as %s in compose/)", key, variable).contains("`" + key + "`");
    }
  }

  @Test
  void shouldHaveAnEntrypointThatBashAccepts() throws Exception {
    Path bash = onPath("bash");
    Assumptions.assumeTrue(bash != null, "bash is not installed; entrypoint.sh not checked");
    Process process = new ProcessBuilder(bash.toString(), "-n", COMPOSE.resolve("entrypoint.sh").toString()).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).as(output).isZero();
    assertThat(Files.isExecutable(COMPOSE.resolve("entrypoint.sh"))).as("entrypoint.sh is executable").isTrue();
  }

  @Test
  void shouldRunBothJoinedCommandsAndStopWithTheFirstOneThatExits(@org.junit.jupiter.api.io.TempDir Path bin) throws Exception {
    Path bash = onPath("bash");
    Assumptions.assumeTrue(bash != null, "bash is not installed; entrypoint.sh not run");
    // A stand-in for java: prints its arguments; "worker" exits with 3 once the other command has
    // started (so both lines are printed), anything else waits to be stopped.
    Path java = bin.resolve("java");
    Path started = bin.resolve("other-started");
    Files.writeString(java, "#!/usr/bin/env bash\necho \"java $*\"\n"
        + "case \"$*\" in\n"
        + "  *worker*) while [ ! -e '" + started + "' ]; do sleep 0.05; done; exit 3;;\n"
        + "  *) touch '" + started + "'; exec sleep 60;;\n"
        + "esac\n");
    assertThat(java.toFile().setExecutable(true)).isTrue();
    Path log = bin.resolve("out.txt");
    ProcessBuilder builder = new ProcessBuilder(bash.toString(), COMPOSE.resolve("entrypoint.sh").toString(), "profiler+worker", "--set", "a=b")
        .redirectErrorStream(true).redirectOutput(log.toFile());
    builder.environment().put("PATH", bin + File.pathSeparator + System.getenv("PATH"));
    builder.environment().put("JAVA_OPTS", "-Xmx64m");
    Process process = builder.start();
    // Waits first: an entrypoint that left the profiler running would still be waiting for it.
    boolean exited = process.waitFor(30, TimeUnit.SECONDS);
    process.descendants().forEach(ProcessHandle::destroyForcibly);
    process.destroyForcibly();
    String output = Files.readString(log);
    assertThat(exited).as("the pair stopped when the worker exited: %s", output).isTrue();
    assertThat(process.exitValue()).as(output).isEqualTo(3);
    assertThat(output).contains("java -Xmx64m -jar /opt/partita/partita-launcher.jar profiler --set a=b")
        .contains("java -Xmx64m -jar /opt/partita/partita-launcher.jar worker --set a=b");
  }

  private static Path onPath(String name) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      Path candidate = Path.of(dir, name);
      if (Files.isExecutable(candidate)) {
        return candidate;
      }
    }
    return null;
  }
}
