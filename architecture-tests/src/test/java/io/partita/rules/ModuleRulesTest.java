package io.partita.rules;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The package rules of docs/architecture.md, as tests over the main classes of every module (tests
 * are not imported: a test may reach across, e.g. the gateway's tests start a real worker).
 *
 * <p>ArchUnit fails a rule that matched no class at all (its default, kept), and {@link
 * #shouldImportTheMainClassesOfEveryModule} checks that every module's classes were found, so a
 * rule cannot pass because the import was empty.
 */
class ModuleRulesTest {

  /** The root package of each module's main classes. */
  static final Map<String, String> MODULES = Map.ofEntries(
      Map.entry("schemas", "io.partita.avro.."),
      Map.entry("common", "io.partita.common.."),
      Map.entry("models", "io.partita.models.."),
      Map.entry("runtime", "io.partita.runtime.."),
      Map.entry("planner-core", "io.partita.planning.."),
      Map.entry("testkit", "io.partita.testkit.."),
      Map.entry("profiler-worker", "io.partita.profiler.."),
      Map.entry("planner-stream", "io.partita.planner.."),
      Map.entry("inference-worker", "io.partita.worker.."),
      Map.entry("gateway", "io.partita.gateway.."),
      Map.entry("client", "io.partita.client.."),
      Map.entry("launcher", "io.partita.launcher.."));

  private static final String KAFKA = "org.apache.kafka..";
  private static final String ONNX_RUNTIME = "ai.onnxruntime..";

  private static JavaClasses classes;

  @BeforeAll
  static void importMainClasses() {
    classes = new ClassFileImporter()
        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
        .importPackages("io.partita");
  }

  @Test
  void shouldImportTheMainClassesOfEveryModule() {
    for (Map.Entry<String, String> m : MODULES.entrySet()) {
      String root = m.getValue().substring(0, m.getValue().length() - 2);
      assertThat(classes.stream().filter(c -> c.getPackageName().equals(root) || c.getPackageName().startsWith(root + ".")))
          .as("main classes of %s (%s)", m.getKey(), root)
          .isNotEmpty();
    }
  }

  @Test
  void shouldKeepModulesInTheirLayers() {
    layeredArchitecture().consideringOnlyDependenciesInLayers()
        .layer("schemas").definedBy(MODULES.get("schemas"))
        .layer("common").definedBy(MODULES.get("common"))
        .layer("models").definedBy(MODULES.get("models"))
        .layer("runtime").definedBy(MODULES.get("runtime"))
        .layer("planner-core").definedBy(MODULES.get("planner-core"))
        .layer("testkit").definedBy(MODULES.get("testkit"))
        .layer("profiler-worker").definedBy(MODULES.get("profiler-worker"))
        .layer("planner-stream").definedBy(MODULES.get("planner-stream"))
        .layer("inference-worker").definedBy(MODULES.get("inference-worker"))
        .layer("gateway").definedBy(MODULES.get("gateway"))
        .layer("client").definedBy(MODULES.get("client"))
        .layer("launcher").definedBy(MODULES.get("launcher"))
        // schemas <- common <- services; models, planner-core and runtime are libraries below the services.
        .whereLayer("schemas").mayNotAccessAnyLayer()
        .whereLayer("common").mayOnlyAccessLayers("schemas", "models")
        .whereLayer("models").mayNotAccessAnyLayer()
        .whereLayer("runtime").mayOnlyAccessLayers("models")
        .whereLayer("planner-core").mayOnlyAccessLayers("models")
        // The test kit is only ever a test dependency: no main class uses it.
        .whereLayer("testkit").mayNotBeAccessedByAnyLayer()
        // Services see the floors below them, never each other; only the launcher sees them all.
        .whereLayer("profiler-worker").mayOnlyBeAccessedByLayers("launcher")
        .whereLayer("planner-stream").mayOnlyBeAccessedByLayers("launcher")
        .whereLayer("inference-worker").mayOnlyBeAccessedByLayers("launcher")
        .whereLayer("gateway").mayOnlyBeAccessedByLayers("launcher")
        // The client is for applications: it depends on no service, and no service on it.
        .whereLayer("client").mayOnlyAccessLayers("schemas", "common", "models")
        .whereLayer("client").mayOnlyBeAccessedByLayers("launcher")
        .whereLayer("launcher").mayNotBeAccessedByAnyLayer()
        .check(classes);
  }

  @Test
  void shouldHaveNoCyclesBetweenModules() {
    slices().matching("io.partita.(*)..").should().beFreeOfCycles().check(classes);
  }

  @Test
  void shouldKeepKafkaOutOfThePureCoreAndTheLibraries() {
    noClasses().that().resideInAnyPackage(
            MODULES.get("models"), MODULES.get("runtime"), MODULES.get("planner-core"),
            "io.partita.worker.batch..", "io.partita.worker.balance..", "io.partita.worker.delivery..", "io.partita.worker.serving..",
            "io.partita.gateway.http..")
        .should().dependOnClassesThat().resideInAPackage(KAFKA)
        .because("planning, batching, delivery decisions, serving and HTTP validation are plain Java over records"
            + " (docs/architecture.md); Kafka glue lives in the kafka packages")
        .check(classes);
  }

  @Test
  void shouldOpenOnnxRuntimeOnlyInTheRuntimeAndTheServingCode() {
    noClasses().that().resideInAnyPackage(
            MODULES.get("schemas"), MODULES.get("common"), MODULES.get("models"), MODULES.get("planner-core"),
            MODULES.get("planner-stream"), MODULES.get("gateway"), MODULES.get("client"))
        .should().dependOnClassesThat().resideInAPackage(ONNX_RUNTIME)
        .because("reading a model repository needs no ONNX Runtime (signatures come from the ONNX protobuf);"
            + " sessions are opened through the runtime module")
        .check(classes);
  }
}
