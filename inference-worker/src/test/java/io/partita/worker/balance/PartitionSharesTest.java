package io.partita.worker.balance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SortedMap;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class PartitionSharesTest {

  private static TopicCapacity known(double capacity) {
    return new TopicCapacity(capacity, 1, 0);
  }

  @Test
  void shouldMeasureHowFarAWorkersShareMovesByWhatTheGroupWeighsItBy() {
    // known capacity on both sides: by capacity, relative to the larger
    assertThat(new TopicCapacity(90, 2, 0).move(new TopicCapacity(100, 2, 0))).isCloseTo(0.10, within(1e-9));
    assertThat(new TopicCapacity(300, 2, 0).move(new TopicCapacity(100, 1, 0))).isCloseTo(2.0 / 3, within(1e-9));
    // a slot without planned capacity: counted by slots here, so a capacity move alone is none
    assertThat(new TopicCapacity(50, 2, 1).move(new TopicCapacity(10, 2, 1))).isZero();
    assertThat(new TopicCapacity(0, 3, 3).move(new TopicCapacity(0, 2, 2))).isCloseTo(1.0 / 3, within(1e-9));
    // slots from or to none, or the capacity becoming known: the whole share
    assertThat(new TopicCapacity(100, 1, 0).move(TopicCapacity.NONE)).isEqualTo(1.0);
    assertThat(TopicCapacity.NONE.move(new TopicCapacity(100, 1, 0))).isEqualTo(1.0);
    assertThat(new TopicCapacity(100, 2, 0).move(new TopicCapacity(0, 2, 2))).isEqualTo(1.0);
    assertThat(TopicCapacity.NONE.move(TopicCapacity.NONE)).isZero();
  }

  @Test
  void shouldGiveAHostPartitionsInProportionToItsPlannedCapacity() {
    Map<String, TopicCapacity> offers = Map.of("fast", known(300), "slow", known(100));

    SortedMap<String, List<Integer>> shares = PartitionShares.share(8, offers, Map.of());

    assertThat(shares.get("fast")).hasSize(6);
    assertThat(shares.get("slow")).hasSize(2);
  }

  @Test
  void shouldWeighAnUnsizedSlotAsTheGroupsSmallestSizedSlot() {
    // the many-hosts bench's join: two planned hosts, and a third, at a fifth of a core, still on
    // its two start-up slots; by slot count it took half the partitions while it warmed up
    Map<String, TopicCapacity> offers = Map.of("host-1", known(430), "host-2", known(89),
        "host-3", new TopicCapacity(0, 2, 2));

    assertThat(PartitionShares.weights(offers)).containsEntry("host-1", 430.0).containsEntry("host-2", 89.0)
        .containsEntry("host-3", 178.0);
    assertThat(PartitionShares.share(12, offers, Map.of()).get("host-3")).hasSize(3);
    // a host with sized and unsized slots: its sized capacity, each unsized slot as the smallest
    // sized slot of the group (here its own: 300 over two slots)
    assertThat(PartitionShares.weights(Map.of("a", new TopicCapacity(300, 3, 1), "b", known(200))))
        .containsEntry("a", 450.0).containsEntry("b", 200.0);
  }

  @Test
  void shouldWeighBySlotCountWhileNoSlotIsSized() {
    Map<String, TopicCapacity> offers = Map.of("a", new TopicCapacity(0, 2, 2), "b", new TopicCapacity(0, 1, 1));

    assertThat(PartitionShares.weights(offers)).containsEntry("a", 2.0).containsEntry("b", 1.0);
  }

  @Test
  void shouldGiveNoPartitionToAWorkerWithoutASlotOfTheBaseModel() {
    Map<String, TopicCapacity> offers = Map.of("a", known(50), "b", TopicCapacity.NONE);

    SortedMap<String, List<Integer>> shares = PartitionShares.share(4, offers, Map.of());

    assertThat(shares.get("a")).containsExactly(0, 1, 2, 3);
    assertThat(shares.get("b")).isEmpty();
  }

  @Test
  void shouldShareEvenlyWhenNoWorkerHasASlotYet() {
    Map<String, TopicCapacity> offers = Map.of("a", TopicCapacity.NONE, "b", TopicCapacity.NONE);

    assertThat(PartitionShares.share(4, offers, Map.of()).values()).allSatisfy(l -> assertThat(l).hasSize(2));
  }

  @Test
  void shouldKeepOwnedPartitionsSoAReshareMovesAsFewAsItMust() {
    Map<String, List<Integer>> owned = Map.of("fast", List.of(0, 2, 4, 6), "slow", List.of(1, 3, 5, 7));

    SortedMap<String, List<Integer>> shares = PartitionShares.share(8,
        Map.of("fast", known(300), "slow", known(100)), owned);

    assertThat(shares.get("fast")).containsAll(List.of(0, 2, 4, 6)).hasSize(6);
    assertThat(shares.get("slow")).hasSize(2).isSubsetOf(1, 3, 5, 7);
  }

  @Test
  void shouldCountWithinOnePartitionOfTheExactShareAndCoverEveryPartitionOnce() {
    Random random = new Random();
    long seed = random.nextLong();
    random.setSeed(seed);
    for (int trial = 0; trial < 2_000; trial++) {
      final int partitions = 1 + random.nextInt(64);
      final int t = trial;
      int members = 1 + random.nextInt(6);
      Map<String, TopicCapacity> offers = new HashMap<>();
      Map<String, List<Integer>> owned = new HashMap<>();
      for (int m = 0; m < members; m++) {
        int slots = random.nextInt(3);
        int unknown = slots == 0 ? 0 : random.nextInt(4) == 0 ? 1 : 0;
        offers.put("m" + m, new TopicCapacity(slots == 0 ? 0 : random.nextDouble() * 1000, slots, unknown));
        List<Integer> mine = new ArrayList<>();
        for (int p = 0; p < partitions + 2; p++) {
          if (random.nextInt(members) == 0) {
            mine.add(p); // may claim partitions others claim too, or that do not exist
          }
        }
        owned.put("m" + m, mine);
      }
      SortedMap<String, Double> weights = PartitionShares.weights(offers);
      double total = weights.values().stream().mapToDouble(Double::doubleValue).sum();

      SortedMap<String, List<Integer>> shares = PartitionShares.share(partitions, offers, owned);

      List<Integer> all = new ArrayList<>();
      shares.values().forEach(all::addAll);
      assertThat(all).as("seed %d trial %d", seed, t).doesNotHaveDuplicates().hasSize(partitions)
          .allSatisfy(p -> assertThat(p).isBetween(0, partitions - 1));
      shares.forEach((member, list) -> assertThat((double) list.size())
          .as("seed %d trial %d member %s", seed, t, member)
          .isCloseTo(partitions * weights.get(member) / total, org.assertj.core.api.Assertions.within(1.0 - 1e-9)));
    }
  }

  @Test
  void shouldWithholdAPartitionThatMovesUntilItsOldOwnerGaveItUp() {
    Map<String, List<Integer>> owned = Map.of("fast", List.of(0, 1, 2, 3), "slow", List.of(4, 5, 6, 7));
    SortedMap<String, List<Integer>> target = PartitionShares.share(8,
        Map.of("fast", known(300), "slow", known(100)), owned);

    SortedMap<String, List<Integer>> first = PartitionShares.withholdMoving(target, owned);

    assertThat(first.get("fast")).containsExactly(0, 1, 2, 3);
    assertThat(first.get("slow")).hasSize(2);
    // the slow worker gave up what it lost; the next round hands those over
    SortedMap<String, List<Integer>> second = PartitionShares.withholdMoving(
        PartitionShares.share(8, Map.of("fast", known(300), "slow", known(100)), first), first);
    assertThat(second.get("fast")).hasSize(6);
    assertThat(second.get("slow")).isEqualTo(first.get("slow"));
  }

  @Test
  void shouldIgnoreOwnershipClaimedByAMemberThatLeft() {
    Map<String, List<Integer>> owned = Map.of("gone", List.of(0, 1));

    SortedMap<String, List<Integer>> first = PartitionShares.withholdMoving(
        PartitionShares.share(2, Map.of("a", known(1)), owned), owned);

    assertThat(first.get("a")).containsExactly(0, 1);
  }

  @Test
  void shouldRoundTripWhatAWorkerOffersThroughItsSubscription() {
    Map<String, TopicCapacity> offers = new TreeMap<>(Map.of("p.requests.demo", new TopicCapacity(1234.5, 2, 1),
        "p.requests.heavy-mlp", new TopicCapacity(0, 0, 0)));

    assertThat(PartitionShares.decode(PartitionShares.encode(offers))).isEqualTo(offers);
  }

  @Test
  void shouldRefuseCapacityDataCutShortAndIgnoreDataOfAnotherVersion() {
    ByteBuffer full = PartitionShares.encode(Map.of("t", known(5)));
    ByteBuffer cut = ByteBuffer.wrap(full.array(), 0, full.remaining() - 3);

    assertThatThrownBy(() -> PartitionShares.decode(cut)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("capacity data");
    assertThat(PartitionShares.decode(ByteBuffer.wrap(new byte[] {0, 9, 0, 0, 0, 0}))).isEmpty();
    assertThat(PartitionShares.decode(null)).isEmpty();
  }

  @Test
  void shouldNoticeOnlyChangesLargerThanTheTolerance() {
    TopicCapacity base = new TopicCapacity(100, 1, 0);

    assertThat(base.differs(new TopicCapacity(110, 1, 0), 0.2)).isFalse();
    assertThat(base.differs(new TopicCapacity(130, 1, 0), 0.2)).isTrue();
    assertThat(base.differs(new TopicCapacity(100, 2, 0), 0.2)).isTrue();
    assertThat(base.differs(new TopicCapacity(0, 1, 1), 0.2)).isTrue();
  }
}
