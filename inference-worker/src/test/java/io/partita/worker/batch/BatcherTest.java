package io.partita.worker.batch;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class BatcherTest {
  private static final BatchKey A = BatchKey.oneWeightFile("demo-a", "1", "input:FP32:[8]");
  private static final BatchKey B = BatchKey.oneWeightFile("demo-b", "1", "input:FP32:[8]");
  private static final BatchKey A_V2 = BatchKey.oneWeightFile("demo-a", "2", "input:FP32:[8]");

  private static Pending<String> p(String id, BatchKey key, int rows, long at) {
    return new Pending<>(id, key, rows, at, Pending.NO_DEADLINE);
  }

  private static List<String> ids(List<Pending<String>> ps) {
    return ps.stream().map(Pending::item).toList();
  }

  @Test
  void shouldWaitForTheQueueDelayThenRunALoneRequest() {
    Batcher<String> batcher = new Batcher<>(new BatchPolicy(32, 5));
    batcher.add(p("lone", A, 1, 100));

    Batcher.Decision<String> early = batcher.next(100, false);
    assertThat(early.batch()).isEmpty();
    assertThat(early.wakeAtMs()).isEqualTo(105);
    assertThat(batcher.next(104, false).batch()).isEmpty();

    Batcher.Decision<String> due = batcher.next(105, false);
    assertThat(ids(due.batch())).containsExactly("lone");
    assertThat(batcher.isEmpty()).isTrue();
  }

  @Test
  void shouldSayWhenTheBatcherMustBeAskedAgainBecauseOfTheRequestAdded() {
    Batcher<String> batcher = new Batcher<>(new BatchPolicy(3, 5));
    // the key's first request: its batch is due after the delay
    assertThat(batcher.add(p("a1", A, 1, 100))).isEqualTo(105);
    // a later one of the same key changes nothing: the batch is still due when its oldest request is
    assertThat(batcher.add(p("a2", A, 1, 102))).isEqualTo(105);
    // another key has its own moment
    assertThat(batcher.add(p("b1", B, 1, 103))).isEqualTo(108);
    // a sooner deadline brings the moment forward, as next() would wake for it
    assertThat(batcher.add(new Pending<>("b2", B, 1, 103, 104))).isEqualTo(105);
    assertThat(batcher.next(104, false).wakeAtMs()).isEqualTo(105);
    // the request that fills a batch: at once
    assertThat(batcher.add(p("a3", A, 1, 104))).isEqualTo(Long.MIN_VALUE);
    assertThat(ids(batcher.next(104, false).batch())).containsExactly("a1", "a2", "a3");
  }

  @Test
  void shouldPutServiceModelsOfOneBaseModelInOneBatchWhenKeyedAcrossWeightFiles() {
    Batcher<String> batcher = new Batcher<>(new BatchPolicy(32, 0));
    BatchKey base = BatchKey.acrossWeightFiles("demo-mlp", "1", "input:FP32:[8]");
    batcher.add(p("a1", base, 1, 100));
    batcher.add(p("b1", base, 2, 100));
    batcher.add(p("a2", base, 1, 100));
    batcher.add(p("other-layout", BatchKey.acrossWeightFiles("demo-mlp", "1", "input:FP32:[9]"), 1, 100));
    assertThat(ids(batcher.next(100, false).batch())).containsExactly("a1", "b1", "a2");
    assertThat(ids(batcher.next(100, false).batch())).containsExactly("other-layout");
    // A service model's own key never shares a batch with the base model's.
    assertThat(BatchKey.oneWeightFile("demo-mlp", "1", "x")).isNotEqualTo(BatchKey.acrossWeightFiles("demo-mlp", "1", "x"));
  }

  @Test
  void shouldRunAtOnceWithZeroDelay() {
    Batcher<String> batcher = new Batcher<>(new BatchPolicy(32, 0));
    batcher.add(p("r1", A, 1, 100));
    batcher.add(p("r2", A, 1, 100));
    assertThat(ids(batcher.next(100, false).batch())).containsExactly("r1", "r2");
  }

  @ParameterizedTest(name = "{0} requests of {1} rows, max {2} rows: batches of {3} requests")
  @CsvSource({
      "10, 3, 8, 2",
      "10, 1, 4, 4",
      "5, 4, 4, 1",
      "3, 9, 8, 1", // a request over the limit runs alone
      "7, 2, 64, 7"})
  void shouldNeverExceedTheMaximumBatch(int count, int rows, int maxRows, int perBatch) {
    Batcher<String> batcher = new Batcher<>(new BatchPolicy(maxRows, 1_000));
    for (int i = 0; i < count; i++) {
      batcher.add(p("r" + i, A, rows, 0));
    }
    List<List<String>> batches = new ArrayList<>();
    long now = 0;
    while (!batcher.isEmpty()) {
      Batcher.Decision<String> d = batcher.next(now, false);
      if (d.batch().isEmpty()) {
        now = d.wakeAtMs();
        continue;
      }
      int batchRows = d.batch().stream().mapToInt(Pending::rows).sum();
      assertThat(batchRows <= maxRows || d.batch().size() == 1).as("batch of %d rows", batchRows).isTrue();
      batches.add(ids(d.batch()));
    }
    assertThat(batches.get(0)).hasSize(perBatch);
    assertThat(batches.stream().mapToInt(List::size).sum()).isEqualTo(count);
    assertThat(batches.stream().flatMap(List::stream)).containsExactlyElementsOf(
        java.util.stream.IntStream.range(0, count).mapToObj(i -> "r" + i).toList());
  }

  @Test
  void shouldRunAFullBatchWithoutWaitingForTheDelay() {
    Batcher<String> batcher = new Batcher<>(new BatchPolicy(4, 1_000));
    for (int i = 0; i < 5; i++) {
      batcher.add(p("r" + i, A, 1, 0));
    }
    assertThat(ids(batcher.next(0, false).batch())).containsExactly("r0", "r1", "r2", "r3");
    // the one left over waits for company until its delay is up
    Batcher.Decision<String> rest = batcher.next(0, false);
    assertThat(rest.batch()).isEmpty();
    assertThat(rest.wakeAtMs()).isEqualTo(1_000);
  }

  @Test
  void shouldNeverMixServiceModelsOrVersionsInABatch() {
    Batcher<String> batcher = new Batcher<>(new BatchPolicy(64, 0));
    BatchKey[] keys = {A, B, A_V2};
    for (int i = 0; i < 30; i++) {
      batcher.add(p("r" + i, keys[i % 3], 1, i));
    }
    List<BatchKey> order = new ArrayList<>();
    while (!batcher.isEmpty()) {
      List<Pending<String>> batch = batcher.next(100, false).batch();
      assertThat(batch).extracting(Pending::key).containsOnly(batch.get(0).key());
      assertThat(batch).hasSize(10);
      order.add(batch.get(0).key());
    }
    assertThat(order).containsExactly(A, B, A_V2); // oldest first
  }

  @Test
  void shouldRunTheDueBatchOfTheOldestRequestFirst() {
    Batcher<String> batcher = new Batcher<>(new BatchPolicy(2, 10));
    batcher.add(p("a1", A, 1, 0));
    batcher.add(p("b1", B, 1, 1));
    batcher.add(p("b2", B, 1, 2)); // B is full, A is not due yet
    assertThat(ids(batcher.next(3, false).batch())).containsExactly("b1", "b2");
    assertThat(batcher.next(3, false).wakeAtMs()).isEqualTo(10);
    assertThat(ids(batcher.next(10, false).batch())).containsExactly("a1");
  }

  @Test
  void shouldTakeOutExpiredRequestsWithoutRunningThem() {
    Batcher<String> batcher = new Batcher<>(new BatchPolicy(8, 50));
    batcher.add(new Pending<>("late", A, 1, 0, 20));
    batcher.add(new Pending<>("fine", A, 1, 0, 1_000));

    Batcher.Decision<String> waiting = batcher.next(10, false);
    assertThat(waiting.idle()).isTrue();
    assertThat(waiting.wakeAtMs()).as("wakes when the first deadline passes").isEqualTo(21);

    Batcher.Decision<String> d = batcher.next(21, false);
    assertThat(ids(d.expired())).containsExactly("late");
    assertThat(d.batch()).isEmpty();
    assertThat(ids(batcher.next(50, false).batch())).containsExactly("fine");
  }

  @Test
  void shouldRunEverythingQueuedWhenFlushing() {
    Batcher<String> batcher = new Batcher<>(new BatchPolicy(8, 60_000));
    batcher.add(p("a", A, 1, 0));
    batcher.add(p("b", B, 1, 0));
    assertThat(ids(batcher.next(1, true).batch())).containsExactly("a");
    assertThat(ids(batcher.next(1, true).batch())).containsExactly("b");
    assertThat(batcher.next(1, true).wakeAtMs()).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void shouldKeepTwoEqualRequestsApart() {
    Batcher<String> batcher = new Batcher<>(new BatchPolicy(1, 0));
    batcher.add(p("same", A, 1, 0));
    batcher.add(p("same", A, 1, 0));
    assertThat(batcher.next(0, false).batch()).hasSize(1);
    assertThat(batcher.size()).isEqualTo(1);
    assertThat(batcher.rows()).isEqualTo(1);
  }

  /**
   * The batcher keeps per-key queues, a key order and a deadline heap so that a decision never
   * walks the whole queue; this checks it against the plain definition (walk everything: expire,
   * group by key in arrival order, take the first due group's prefix) over random runs with several
   * keys, sizes over and under the limit, deadlines, delays, policy changes and flushes.
   */
  @ParameterizedTest(name = "seed {0}")
  @CsvSource({"1", "2", "3", "4", "5", "6", "7", "8"})
  void shouldDecideAsThePlainDefinitionDoesOverRandomRuns(long seed) {
    java.util.Random random = new java.util.Random(seed);
    BatchKey[] keys = {A, B, A_V2, BatchKey.acrossWeightFiles("demo-mlp", "1", "input:FP32:[8]")};
    BatchPolicy policy = new BatchPolicy(8, 5);
    Batcher<String> batcher = new Batcher<>(policy);
    List<Pending<String>> plain = new ArrayList<>();
    long now = 0;
    for (int step = 0; step < 3_000; step++) {
      int action = random.nextInt(10);
      if (action < 5) {
        long deadline = random.nextInt(4) == 0 ? now + random.nextInt(30) : Pending.NO_DEADLINE;
        Pending<String> p = new Pending<>("r" + step, keys[random.nextInt(keys.length)], 1 + random.nextInt(random.nextInt(8) == 0 ? 12 : 4), now, deadline);
        batcher.add(p);
        plain.add(p);
      } else if (action < 9) {
        boolean flush = random.nextInt(20) == 0;
        Batcher.Decision<String> got = batcher.next(now, flush);
        Batcher.Decision<String> want = plainNext(plain, policy, now, flush);
        assertThat(got.expired()).as("expired at step %d", step).containsExactlyElementsOf(want.expired());
        assertThat(got.batch()).as("batch at step %d", step).containsExactlyElementsOf(want.batch());
        assertThat(got.wakeAtMs()).as("wake at step %d", step).isEqualTo(want.wakeAtMs());
        assertThat(batcher.size()).isEqualTo(plain.size());
        assertThat(batcher.rows()).isEqualTo(plain.stream().mapToInt(Pending::rows).sum());
      } else if (random.nextInt(10) == 0) {
        policy = new BatchPolicy(1 + random.nextInt(16), random.nextInt(10));
        batcher.policy(policy);
      }
      now += random.nextInt(3);
    }
    assertThat(batcher.drainAll()).containsExactlyElementsOf(plain);
    assertThat(batcher.isEmpty()).isTrue();
  }

  /** The definition, walking the whole queue (what the batcher did before it kept per-key queues). */
  private static Batcher.Decision<String> plainNext(List<Pending<String>> queue, BatchPolicy policy, long now, boolean flush) {
    List<Pending<String>> expired = new ArrayList<>();
    queue.removeIf(p -> {
      if (p.expiredAt(now)) {
        expired.add(p);
        return true;
      }
      return false;
    });
    if (queue.isEmpty()) {
      return new Batcher.Decision<>(expired, List.of(), Long.MAX_VALUE);
    }
    java.util.Map<BatchKey, List<Pending<String>>> groups = new java.util.LinkedHashMap<>();
    for (Pending<String> p : queue) {
      groups.computeIfAbsent(p.key(), k -> new ArrayList<>()).add(p);
    }
    long wakeAt = Long.MAX_VALUE;
    for (List<Pending<String>> group : groups.values()) {
      List<Pending<String>> batch = new ArrayList<>();
      int rows = 0;
      for (Pending<String> p : group) {
        if (!batch.isEmpty() && rows + p.rows() > policy.maxRows()) {
          break;
        }
        batch.add(p);
        rows += p.rows();
      }
      boolean full = rows >= policy.maxRows() || batch.size() < group.size();
      long dueAt = group.get(0).enqueuedAtMs() + policy.maxDelayMs();
      if (flush || full || now >= dueAt) {
        java.util.Set<Pending<String>> taken = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        taken.addAll(batch);
        queue.removeIf(taken::contains);
        return new Batcher.Decision<>(expired, batch, now);
      }
      wakeAt = Math.min(wakeAt, dueAt);
    }
    for (Pending<String> p : queue) {
      if (p.deadlineMs() != Pending.NO_DEADLINE) {
        wakeAt = Math.min(wakeAt, p.deadlineMs() + 1);
      }
    }
    return new Batcher.Decision<>(expired, List.of(), wakeAt);
  }
}
