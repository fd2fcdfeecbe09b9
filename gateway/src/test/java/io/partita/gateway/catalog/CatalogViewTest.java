package io.partita.gateway.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.avro.ModelVersion;
import io.partita.models.demo.DemoMlp;
import io.partita.models.demo.DemoRepository;
import io.partita.models.repo.ModelRepository;
import io.partita.models.repo.RepositoryIndex;
import io.partita.models.repo.VersionEntry;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CatalogViewTest {
  @TempDir static Path repo;
  static RepositoryIndex scanned;

  @BeforeAll
  static void writeDemo() throws Exception {
    DemoRepository.writeTo(repo);
    scanned = ModelRepository.scan(repo);
  }

  private static CatalogView fedWholeRepository() {
    CatalogView view = new CatalogView();
    scanned.models().values().forEach(m -> m.versions().values()
        .forEach(v -> view.putVersion(v.model() + "/" + v.version(), CatalogRecords.version(v))));
    scanned.serviceModels().values().forEach(s -> view.putService(s.name(), CatalogRecords.service(s)));
    view.rebuild();
    return view;
  }

  @Test
  void shouldOfferWhatTheRepositoryOffersWithTheSameSignaturesAndVersionOrder() {
    RepositoryIndex fromCatalog = fedWholeRepository().current();

    assertThat(fromCatalog.serviceModels().keySet()).containsExactlyElementsOf(scanned.serviceModels().keySet());
    fromCatalog.serviceModels().values().forEach(s ->
{
      var disk = scanned.serviceModel(s.name()).orElseThrow();
      assertThat(s.baseModel()).isEqualTo(disk.baseModel());
      assertThat(s.weightFile().map(w -> w.relativePath() + " " + w.sha256()))
          .isEqualTo(disk.weightFile().map(w -> w.relativePath() + " " + w.sha256()));
    });
    var model = fromCatalog.model(DemoMlp.MODEL_NAME).orElseThrow();
    var onDisk = scanned.model(DemoMlp.MODEL_NAME).orElseThrow();
    assertThat(model.versions().keySet()).containsExactlyElementsOf(onDisk.versions().keySet());
    assertThat(model.latest().version()).isEqualTo(onDisk.latest().version());
    for (VersionEntry v : onDisk.versions().values()) {
      var fromRecord = model.version(v.version()).orElseThrow().signature();
      assertThat(fromRecord.inputs()).isEqualTo(v.signature().inputs()); // overridable parameters are the worker's business
      assertThat(fromRecord.outputs()).isEqualTo(v.signature().outputs());
    }
  }

  @Test
  void shouldWithdrawAServiceModelWhenItsRecordIsTombstoned() {
    CatalogView view = fedWholeRepository();

    view.putService("demo-b", null);
    boolean changed = view.rebuild();

    assertThat(changed).isTrue();
    assertThat(view.current().serviceModels()).doesNotContainKey("demo-b").containsKey("demo-a");
  }

  @Test
  void shouldWithdrawEveryServiceModelOfABaseModelWhoseVersionsAreAllTombstoned() {
    CatalogView view = fedWholeRepository();

    scanned.model(DemoMlp.MODEL_NAME).orElseThrow().versions().keySet()
        .forEach(v -> view.putVersion(DemoMlp.MODEL_NAME + "/" + v, null));
    view.rebuild();

    assertThat(view.current().serviceModels()).isEmpty();
    assertThat(view.current().models()).isEmpty();
  }

  @Test
  void shouldReportNoChangeWhenTheSameRecordsArriveAgain() {
    CatalogView view = fedWholeRepository();
    scanned.serviceModels().values().forEach(s -> view.putService(s.name(), CatalogRecords.service(s)));

    assertThat(view.rebuild()).isFalse();
  }

  @Test
  void shouldLeaveOutAVersionWrittenBeforeSignaturesWereCarried() {
    CatalogView view = fedWholeRepository();
    VersionEntry v1 = scanned.model(DemoMlp.MODEL_NAME).orElseThrow().version("1").orElseThrow();

    view.putVersion(DemoMlp.MODEL_NAME + "/1", CatalogRecords.versionWithoutSignature(v1));
    view.rebuild();

    assertThat(view.current().model(DemoMlp.MODEL_NAME).orElseThrow().versions()).doesNotContainKey("1").containsKey("2");
  }

  @Test
  void shouldLeaveOutAVersionWhoseDatatypeIsNotAnInferenceProtocolOne() {
    CatalogView view = new CatalogView();
    VersionEntry v1 = scanned.model(DemoMlp.MODEL_NAME).orElseThrow().version("1").orElseThrow();
    ModelVersion bad = CatalogRecords.version(v1);
    bad.getInputs().get(0).setDatatype("float32");

    view.putVersion(DemoMlp.MODEL_NAME + "/1", bad);
    scanned.serviceModels().values().forEach(s -> view.putService(s.name(), CatalogRecords.service(s)));
    view.rebuild();

    assertThat(view.current().serviceModels()).isEmpty();
  }

  @Test
  void shouldOrderNumericVersionsNumerically() {
    assertThat(io.partita.models.repo.ModelRepository.versionKey("10")).isGreaterThan(io.partita.models.repo.ModelRepository.versionKey("9"));
    assertThat(io.partita.models.repo.ModelRepository.versionKey("beta")).isGreaterThan(io.partita.models.repo.ModelRepository.versionKey("100"));
  }
}
