package io.partita.planner.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.avro.SlotAssignment;
import io.partita.planning.Rendezvous;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Routing under churn re-ranks only the service models a change can matter to ({@link RouteChoices}):
 * checked against the full ranking ({@link RoutePlans#highestRanked}, a priority queue over decoded
 * slots) on seeded random slot sets where slots join, leave and change version, and each service
 * model holds planned instances on some slots (which are not its candidates).
 */
class RouteChoicesTest {

  private static SlotAssignment slot(String key) {
    int cut = key.lastIndexOf(Keys.SEP);
    return SlotAssignment.newBuilder().setHost(key.substring(0, cut)).setSlot(key.substring(cut + 1)).setModel("b")
        .setVersion("1").setPool("cpu").setServiceModels(List.of()).setPlanId(null).build();
  }

  /** The oracle: every candidate (the base model's slots less the held ones) ranked from scratch. */
  private static Set<String> full(Set<String> slots, Set<String> held, String serviceModel, int limit) {
    List<SlotAssignment> candidates = new ArrayList<>();
    for (String key : slots) {
      if (!held.contains(key)) {
        candidates.add(slot(key));
      }
    }
    Set<String> out = new TreeSet<>();
    RoutePlans.highestRanked(candidates, serviceModel, limit).forEach(a -> out.add(Keys.hostSlot(a.getHost(), a.getSlot())));
    return out;
  }

  private static String newKey(Random random, Set<String> taken) {
    while (true) {
      // host names that sort differently from their keys ("h-1/..." before "h/...")
      String host = List.of("h", "h-1", "h.2", "host-" + random.nextInt(400)).get(random.nextInt(4));
      String key = Keys.hostSlot(host, "cpu-" + random.nextInt(8));
      if (!taken.contains(key)) {
        return key;
      }
    }
  }

  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
  void shouldChooseWhatTheFullRankingChoosesUnderJoinsAndLeaves(long seed) {
    Random random = new Random(seed);
    int limit = List.of(0, 1, 2, 5, 16).get(random.nextInt(5));
    Set<String> slots = new TreeSet<>();
    int start = random.nextInt(3) == 0 ? random.nextInt(limit + 2) : 20 + random.nextInt(120);
    while (slots.size() < start) {
      slots.add(newKey(random, slots));
    }
    Map<String, Set<String>> held = new TreeMap<>();
    for (int i = 0; i < 40; i++) {
      Set<String> of = new HashSet<>();
      for (String key : slots) {
        if (random.nextInt(20) == 0) {
          of.add(key);
        }
      }
      held.put("sm-" + seed + "-" + i, of);
    }
    RouteChoices choices = new RouteChoices(limit);
    held.forEach((sm, of) -> choices.put(sm, new SlotRanking(slots).highest(sm, of, limit)));

    int kept = 0;
    int reranked = 0;
    for (int step = 0; step < 200; step++) {
      Set<String> opened = new TreeSet<>();
      Set<String> changed = new TreeSet<>();
      int changes = 1 + random.nextInt(4);
      for (int c = 0; c < changes; c++) {
        int what = random.nextInt(3);
        List<String> present = new ArrayList<>(slots);
        if (what == 0 || present.isEmpty()) { // a slot joins
          String key = newKey(random, slots);
          slots.add(key);
          opened.add(key);
        } else { // a slot leaves, or changes version (it stays a candidate; its entry changes)
          String key = present.get(random.nextInt(present.size()));
          if (what == 1) {
            slots.remove(key);
          }
          changed.add(key);
        }
      }
      // What the planner re-ranks: the routes listing a changed slot, those a joining slot would enter,
      // and a service model whose own instances' slots changed (here: one of them left).
      Set<String> rerank = new TreeSet<>();
      changed.forEach(key -> rerank.addAll(choices.listing(key)));
      for (String sm : held.keySet()) {
        for (String key : opened) {
          if (choices.wouldTake(sm, key)) {
            rerank.add(sm);
          }
        }
        if (held.get(sm).removeIf(key -> !slots.contains(key))) {
          rerank.add(sm);
        }
      }
      for (Map.Entry<String, Set<String>> e : held.entrySet()) {
        String sm = e.getKey();
        Set<String> expected = full(slots, e.getValue(), sm, limit);
        if (rerank.contains(sm)) {
          List<String> chosen = new SlotRanking(slots).highest(sm, e.getValue(), limit);
          assertThat(new TreeSet<>(chosen)).as("seed %d step %d: %s ranked again", seed, step, sm).isEqualTo(expected);
          choices.put(sm, chosen);
          reranked++;
        } else {
          assertThat(new TreeSet<>(choices.chosen(sm))).as("seed %d step %d: %s kept its choice", seed, step, sm)
              .isEqualTo(expected);
          kept++;
        }
      }
    }
    assertThat(kept + reranked).isEqualTo(200 * 40);
    if (limit > 0 && start > 2 * limit) {
      // Churn of a few slots in a fleet many times the limit leaves most choices alone.
      assertThat(kept).as("seed %d, limit %d, %d slots", seed, limit, start).isGreaterThan(reranked);
    }
  }

  @Test
  void shouldTreatAServiceModelNotRoutedYetAsChangedByEverySlot() {
    RouteChoices choices = new RouteChoices(1);
    assertThat(choices.known("a")).isFalse();
    assertThat(choices.wouldTake("a", "h/cpu-0")).isTrue();
    choices.put("a", List.of("h/cpu-0"));
    assertThat(choices.listing("h/cpu-0")).containsExactly("a");
    choices.remove("a");
    assertThat(choices.listing("h/cpu-0")).isEmpty();
    assertThat(choices.wouldTake("a", "h/cpu-1")).isTrue();
    assertThatThrownBy(() -> new RouteChoices(-1)).hasMessageContaining("limit: must be >= 0, was -1");
  }

  @Test
  void shouldHashAKeysHostAndSlotAsTheirOwnStrings() {
    Random random = new Random(5);
    String chars = "ab/-.9Z\u00e9";
    for (int k = 0; k < 2000; k++) {
      StringBuilder b = new StringBuilder();
      int n = random.nextInt(12);
      for (int c = 0; c < n; c++) {
        b.append(chars.charAt(random.nextInt(chars.length())));
      }
      String key = b + "/" + (random.nextBoolean() ? "" : "cpu-" + random.nextInt(100));
      int cut = key.lastIndexOf('/');
      long hashes = SlotRanking.hashes(key);
      assertThat((int) (hashes >>> 32)).as("host of %s", key).isEqualTo(key.substring(0, cut).hashCode());
      assertThat((int) hashes).as("slot of %s", key).isEqualTo(key.substring(cut + 1).hashCode());
      assertThat(SlotRanking.rank(Rendezvous.seed("sm"), key))
          .isEqualTo(Rendezvous.rank("sm", key.substring(0, cut), key.substring(cut + 1)));
    }
    assertThatThrownBy(() -> SlotRanking.hashes("no-separator")).hasMessageContaining("slot key no-separator");
  }

  @Test
  void shouldBreakATieOfRanksByHostThenSlot() {
    assertThat(SlotRanking.outranks(7, "h/cpu-1", 7, "h-1/cpu-0")).as("h before h-1").isTrue();
    assertThat(SlotRanking.outranks(7, "h/cpu-0", 7, "h/cpu-1")).isTrue();
    assertThat(SlotRanking.outranks(7, "h/cpu-1", 7, "h/cpu-0")).isFalse();
    assertThat(SlotRanking.outranks(8, "z/cpu-9", 7, "a/cpu-0")).isTrue();
  }
}
