package io.partita.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class JobCommandTest {
  @Test
  void shouldDrawTheProgressBarWithCountsRateAndEta() {
    assertThat(JobCommand.progressBar("RUNNING", 2500, 3, 5000, 812.4, 4, 10))
        .isEqualTo("[#####.....] 2500/5000  50%  failed 3  812/s  ETA 4s  RUNNING");
    assertThat(JobCommand.progressBar("QUEUED", 0, 0, 10, 0, -1, 4)).isEqualTo("[....] 0/10   0%  QUEUED");
    assertThat(JobCommand.progressBar("DONE", 10, 0, 10, 0, 0, 4)).isEqualTo("[####] 10/10 100%  DONE");
  }

  @Test
  void shouldWriteLongEtasInMinutesAndHours() {
    assertThat(JobCommand.duration(59)).isEqualTo("59s");
    assertThat(JobCommand.duration(125)).isEqualTo("2m05s");
    assertThat(JobCommand.duration(7320)).isEqualTo("2h02m");
  }

  @Test
  void shouldShowTheGatewaysErrorMessage() {
    assertThat(JobCommand.problem(404, "{\"error\":\"job 'x' is not known\"}")).isEqualTo("HTTP 404: job 'x' is not known");
    assertThat(JobCommand.problem(502, "<html>")).isEqualTo("HTTP 502");
  }
}
