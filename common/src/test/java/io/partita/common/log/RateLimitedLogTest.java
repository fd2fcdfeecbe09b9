package io.partita.common.log;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;
import org.junit.jupiter.api.Test;

class RateLimitedLogTest {
  /** Records formatted lines. */
  static final class Lines extends LegacyAbstractLogger {
    final List<String> lines = new ArrayList<>();

    @Override
    protected String getFullyQualifiedCallerName() {
      return null;
    }

    @Override
    protected void handleNormalizedLoggingCall(Level level, Marker marker, String msg, Object[] args, Throwable t) {
      lines.add(level + " " + MessageFormatter.basicArrayFormat(msg, args));
    }

    @Override public boolean isTraceEnabled() { return true; }
    @Override public boolean isDebugEnabled() { return true; }
    @Override public boolean isInfoEnabled() { return true; }
    @Override public boolean isWarnEnabled() { return true; }
    @Override public boolean isErrorEnabled() { return true; }
  }

  private final Lines out = new Lines();
  private final AtomicLong now = new AtomicLong(1_000);
  private final RateLimitedLog log = new RateLimitedLog(out, 60_000, now::get);

  @Test
  void shouldWriteOneLinePerCausePerIntervalWithTheCountHeldBack() {
    for (int i = 0; i < 5_000; i++) {
      log.warn("undecodable request", "Dead-lettering offset {}", i);
    }
    assertThat(out.lines).containsExactly("WARN Dead-lettering offset 0");
    assertThat(log.held("undecodable request")).isEqualTo(4_999);

    now.addAndGet(60_000);
    log.warn("undecodable request", "Dead-lettering offset {}", 5_000);

    assertThat(out.lines).containsExactly("WARN Dead-lettering offset 0",
        "WARN 4999 more of 'undecodable request' in the last 60000 ms (held back); the latest:",
        "WARN Dead-lettering offset 5000");
  }

  @Test
  void shouldKeepCausesApart() {
    log.warn("a", "first a");
    log.warn("b", "first b");
    log.warn("a", "second a");
    assertThat(out.lines).containsExactly("WARN first a", "WARN first b");
  }

  @Test
  void shouldBoundTheNumberOfCausesTracked() {
    for (int i = 0; i < RateLimitedLog.MAX_CAUSES + 1_000; i++) {
      log.warn("cause " + i, "line {}", i);
    }
    assertThat(out.lines).hasSize(RateLimitedLog.MAX_CAUSES + 1);
  }

  @Test
  void shouldReportWhatIsHeldBackOnFlush() {
    log.warn("a", "first");
    log.warn("a", "second");
    log.flush();
    assertThat(out.lines).containsExactly("WARN first", "WARN 1 more of 'a' held back");
  }
}
