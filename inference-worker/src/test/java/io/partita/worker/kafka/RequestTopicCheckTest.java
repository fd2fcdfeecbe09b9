package io.partita.worker.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

class RequestTopicCheckTest {
  private static final Map<String, String> BASE = Map.of("demo", "demo-mlp", "demo-a", "demo-mlp", "ocr-rec", "ocr-rec");
  private static final Function<String, Optional<String>> BASE_OF = m -> Optional.ofNullable(BASE.get(m));

  @Test
  void shouldAcceptEveryServiceModelOfTheTopicsBaseModel() {
    assertThat(RequestTopicCheck.problem("demo-mlp", null, "demo", BASE_OF)).isNull();
    assertThat(RequestTopicCheck.problem("demo-mlp", "demo-a", "demo-a", BASE_OF)).isNull();
    assertThat(RequestTopicCheck.problem("ocr-rec", null, "ocr-rec", BASE_OF)).isNull();
  }

  @Test
  void shouldRefuseAServiceModelOfAnotherBaseModelNamingTheRightTopic() {
    assertThat(RequestTopicCheck.problem("ocr-rec", null, "demo-a", BASE_OF))
        .contains("built on base model 'demo-mlp'").contains("request topic of 'demo-mlp'");
  }

  @Test
  void shouldRefuseAHeaderThatDiffersFromTheRecord() {
    assertThat(RequestTopicCheck.problem("demo-mlp", "demo", "demo-a", BASE_OF)).contains("service-model header 'demo'");
  }

  @Test
  void shouldLeaveAnUnknownModelOnItsOwnTopicToTheRouterAndRefuseItElsewhere() {
    assertThat(RequestTopicCheck.problem("nobody", null, "nobody", BASE_OF)).isNull();
    assertThat(RequestTopicCheck.problem("demo-mlp", null, "nobody", BASE_OF)).contains("not a service model of base model 'demo-mlp'");
  }
}
