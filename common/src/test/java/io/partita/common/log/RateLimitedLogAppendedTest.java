package io.partita.common.log;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** The gateway loops' wording: a count held back told at the end of the next line, or by {@code flushDue}. */
class RateLimitedLogAppendedTest {
  /** The lines {@code logger} writes from now on. */
  private static ListAppender<ILoggingEvent> linesOf(Logger logger) {
    ListAppender<ILoggingEvent> lines = new ListAppender<>();
    lines.start();
    logger.addAppender(lines);
    return lines;
  }

  @Test
  void shouldLogOneLinePerCausePerIntervalWithTheCount() {
    Logger logger = (Logger) LoggerFactory.getLogger("test.warning-summary");
    ListAppender<ILoggingEvent> lines = linesOf(logger);
    AtomicLong now = new AtomicLong(1_000_000);
    RateLimitedLog summary = new RateLimitedLog(logger, 60_000, now::get, RateLimitedLog.Telling.APPENDED);

    // 5,000 undecodable records of one cause, and one of another, within a minute
    for (int i = 0; i < 5000; i++) {
      summary.warn("replies/DecodeException", "passed over record {}", i);
    }
    summary.warn("routes/DecodeException", "passed over a route");
    assertThat(lines.list).extracting(ILoggingEvent::getFormattedMessage)
        .containsExactly("passed over record 0", "passed over a route");

    // Nothing more is said within the interval; after it, flush tells the count
    summary.flushDue();
    assertThat(lines.list).hasSize(2);
    now.addAndGet(60_000);
    summary.flushDue();
    assertThat(lines.list).hasSize(3);
    assertThat(lines.list.get(2).getFormattedMessage())
        .isEqualTo("4999 more warning(s) of kind 'replies/DecodeException' in the last 60.0 s were not logged one by one");

    // The next interval's first warning is logged again
    now.addAndGet(60_000);
    summary.warn("replies/DecodeException", "passed over record {}", 5000);
    assertThat(lines.list).hasSize(4);
    assertThat(summary.total("replies/DecodeException")).isEqualTo(5001);
  }

  @Test
  void shouldTellTheCountWithTheNextLineWhenNotFlushed() {
    Logger logger = (Logger) LoggerFactory.getLogger("test.warning-summary-2");
    ListAppender<ILoggingEvent> lines = linesOf(logger);
    AtomicLong now = new AtomicLong(0);
    RateLimitedLog summary = new RateLimitedLog(logger, 1000, now::get, RateLimitedLog.Telling.APPENDED);
    summary.warn("c", "bad {}", 1);
    summary.warn("c", "bad {}", 2);
    summary.warn("c", "bad {}", 3);
    now.addAndGet(1000);
    summary.warn("c", "bad {}", 4);
    assertThat(lines.list).extracting(ILoggingEvent::getFormattedMessage)
        .containsExactly("bad 1", "bad 4 (2 more like this in the previous 1.0 s were not logged one by one)");
  }
}
