package io.partita.rules;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

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
      Map.entry("launcher", "io.partita.launcher.."),
      Map.entry("bench", "io.partita.bench.."));

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
        .layer("bench").definedBy(MODULES.get("bench"))
        // schemas <- common <- services; models, planner-core and runtime are libraries below the services.
        .whereLayer("schemas").mayNotAccessAnyLayer()
        .whereLayer("common").mayOnlyAccessLayers("schemas", "models")
        .whereLayer("models").mayNotAccessAnyLayer()
        .whereLayer("runtime").mayOnlyAccessLayers("models")
        .whereLayer("planner-core").mayOnlyAccessLayers("models")
        // The test kit is only ever a test dependency: no main class uses it.
        .whereLayer("testkit").mayNotBeAccessedByAnyLayer()
        // Services see the floors below them, never each other; only the launcher (and the bench on
        // top of it, which measures them) sees them all.
        .whereLayer("profiler-worker").mayOnlyBeAccessedByLayers("launcher", "bench")
        .whereLayer("planner-stream").mayOnlyBeAccessedByLayers("launcher", "bench")
        .whereLayer("inference-worker").mayOnlyBeAccessedByLayers("launcher", "bench")
        .whereLayer("gateway").mayOnlyBeAccessedByLayers("launcher", "bench")
        // The client is for applications: it depends on no service, and no service on it.
        .whereLayer("client").mayOnlyAccessLayers("schemas", "common", "models")
        .whereLayer("client").mayOnlyBeAccessedByLayers("launcher", "bench")
        // The bench builds on the launcher (its broker and its multi-process cluster); the launcher
        // finds the bench command at run time (CliExtension) and never names it, and nothing uses the bench.
        .whereLayer("launcher").mayOnlyBeAccessedByLayers("bench")
        .whereLayer("bench").mayNotBeAccessedByAnyLayer()
        .check(classes);
  }

  @Test
  void shouldHaveNoCyclesBetweenModules() {
    slices().matching("io.partita.(*)..").should().beFreeOfCycles().check(classes);
  }

  /**
   * Inside a module, the packages form a graph with no circle either: a package can be read, tested
   * and changed knowing only the packages below it. A slice is one sub-package of the module's root
   * (with everything under it), and the root package itself is a slice too, so a module's entry
   * class cannot hide a circle through it. Each module is checked on its own, so a failure names
   * the module.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("moduleNames")
  void shouldHaveNoCyclesBetweenThePackagesOfAModule(String module) {
    slices().assignedFrom(packagesOf(module)).should().beFreeOfCycles().check(classes);
  }

  /** The root package of a module and each package right under it, as slices named for the module. */
  private static SliceAssignment packagesOf(String module) {
    String root = MODULES.get(module).substring(0, MODULES.get(module).length() - 2);
    return new SliceAssignment() {
      @Override
      public SliceIdentifier getIdentifierOf(JavaClass c) {
        String pkg = c.getPackageName();
        if (pkg.equals(root)) {
          return SliceIdentifier.of(module + " " + root);
        }
        if (!pkg.startsWith(root + ".")) {
          return SliceIdentifier.ignore();
        }
        String rest = pkg.substring(root.length() + 1);
        int dot = rest.indexOf('.');
        return SliceIdentifier.of(module + " " + root + "." + (dot < 0 ? rest : rest.substring(0, dot)));
      }

      @Override
      public String getDescription() {
        return "the packages of " + module + " (" + root + " and each package under it)";
      }
    };
  }

  static Stream<String> moduleNames() {
    return MODULES.keySet().stream().sorted();
  }

  @Test
  void shouldKeepKafkaOutOfThePureCoreAndTheLibraries() {
    noClasses().that().resideInAnyPackage(
            MODULES.get("models"), MODULES.get("runtime"), MODULES.get("planner-core"),
            "io.partita.worker.batch..", "io.partita.worker.balance..", "io.partita.worker.delivery..", "io.partita.worker.serving..",
            "io.partita.gateway.http..", "io.partita.gateway.infer..", "io.partita.gateway.oip..", "io.partita.gateway.refusal..",
            "io.partita.common.packing..", "io.partita.common.coalescing..")
        .should().dependOnClassesThat().resideInAPackage(KAFKA)
        .because("planning, batching, delivery decisions, serving, the gateway's infer path and its HTTP validation are plain Java over records"
            + " (docs/architecture.md); Kafka glue lives in the kafka packages")
        .check(classes);
  }

  /**
   * The gateway's core (the infer path, its refusals, the OIP tensor codec, and the keys, catalog,
   * health, Kafka glue, limits, metrics, routing and row packing they use) knows no transport: the HTTP and gRPC
   * front doors, the batch jobs and the dashboard build on it, never the other way round. A refusal
   * is a kind and a message; each transport says the kind in its own codes.
   */
  @Test
  void shouldKeepTheGatewayCoreFreeOfTransports() {
    noClasses().that().resideInAnyPackage(
            "io.partita.gateway.infer..", "io.partita.gateway.refusal..", "io.partita.gateway.oip..",
            "io.partita.gateway.auth..", "io.partita.gateway.catalog..", "io.partita.gateway.health..", "io.partita.gateway.kafka..",
            "io.partita.gateway.limits..", "io.partita.gateway.metrics..", "io.partita.gateway.routing..")
        .should().dependOnClassesThat().resideInAnyPackage(
            "io.partita.gateway.http..", "io.partita.gateway.grpc..", "io.partita.gateway.server..",
            "io.partita.gateway.jobs..", "io.partita.gateway.dashboard..", "io.vertx..", "io.grpc..")
        .because("a change to how tensors are parsed or how a refusal is answered belongs in one package, not in"
            + " every transport (docs/architecture.md)")
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
