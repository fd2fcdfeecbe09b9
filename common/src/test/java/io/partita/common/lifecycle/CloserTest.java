package io.partita.common.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class CloserTest {
  private final List<String> closed = new ArrayList<>();

  private AutoCloseable named(String name) {
    return () -> closed.add(name);
  }

  private AutoCloseable failing(String name, Exception failure) {
    return () -> {
      closed.add(name);
      throw failure;
    };
  }

  @Test
  void shouldCloseInReverseOrderOfRegistration() {
    Closer closer = new Closer("test");
    closer.register("admin", named("admin"));
    closer.register("producer", named("producer"));
    closer.register("http", named("http"));

    closer.close();

    assertThat(closed).containsExactly("http", "producer", "admin");
  }

  @Test
  void shouldReturnWhatItRegisters() {
    Closer closer = new Closer("test");
    AutoCloseable resource = named("a");

    assertThat(closer.register("a", resource)).isSameAs(resource);
    assertThat(closer.size()).isEqualTo(1);
  }

  @Test
  void shouldCloseEachResourceOnceWhenClosedTwice() {
    Closer closer = new Closer("test");
    closer.register("a", named("a"));

    closer.close();
    closer.close();

    assertThat(closed).containsExactly("a");
    assertThat(closer.size()).isZero();
  }

  @Test
  void shouldGoOnClosingPastAFailureAndThrowTheFirstWithTheOthersSuppressed() {
    IllegalStateException first = new IllegalStateException("producer stuck");
    IllegalArgumentException second = new IllegalArgumentException("admin gone");
    Closer closer = new Closer("test");
    closer.register("admin", failing("admin", second));
    closer.register("consumer", named("consumer"));
    closer.register("producer", failing("producer", first));
    closer.register("http", named("http"));

    assertThatThrownBy(closer::close).isSameAs(first);

    assertThat(closed).containsExactly("http", "producer", "consumer", "admin");
    assertThat(first.getSuppressed()).containsExactly(second);
  }

  @Test
  void shouldWrapACheckedFailureNamingTheResource() {
    IOException io = new IOException("disk full");
    Closer closer = new Closer("gateway");
    closer.register("job store", failing("job store", io));
    closer.register("http", named("http"));

    assertThatThrownBy(closer::close)
        .isInstanceOf(Closer.CloseException.class)
        .hasMessageContaining("job store").hasMessageContaining("gateway").hasMessageContaining("disk full")
        .hasCause(io);
    assertThat(closed).containsExactly("http", "job store");
  }

  @Test
  void shouldAddFailuresToCloseToTheFailureOfAStart() {
    Exception startFailure = new Exception("broker unreachable");
    IllegalStateException closeFailure = new IllegalStateException("producer stuck");
    Closer closer = new Closer("test");
    closer.register("admin", named("admin"));
    closer.register("producer", failing("producer", closeFailure));

    closer.closeAfter(startFailure);

    assertThat(closed).containsExactly("producer", "admin");
    assertThat(startFailure.getSuppressed()).containsExactly(closeFailure);
  }

  @Test
  void shouldCloseWhatIsRegisteredAfterAClose() {
    Closer closer = new Closer("test");
    closer.register("a", named("a"));
    closer.close();
    closer.register("b", named("b"));

    closer.close();

    assertThat(closed).containsExactly("a", "b");
  }
}
