package io.partita.planner.plan;

import io.partita.planning.Rendezvous;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The on-demand slots each service model's route lists ({@link RoutePlans#highestRankedKeys}), as
 * chosen when it was last routed, so that a change to its base model's slots re-routes only the
 * service models whose route it changes. Rendezvous ranking makes that exact without ranking again:
 * the choice is the {@code limit} best of the candidate slots, so
 * <ul>
 *   <li>a slot that leaves (or changes model version, which changes its entry) matters only to the
 *       routes that list it ({@link #listing});
 *   <li>a slot that joins matters only to a route with fewer than {@code limit} entries or whose
 *       worst entry it outranks ({@link #wouldTake});
 * </ul>
 * and a set of changes none of which matters leaves the choice as it was. A service model never
 * routed since this was built (or {@link #clear}ed) is unknown, and every change to its base model's
 * slots matters to it.
 *
 * <p>It holds only what its owner records: the owner must {@link #put} every choice it routes with
 * and {@link #remove} a service model it stops routing, and re-route a service model whenever its
 * own planned instances change (they are not candidates). Pure, and not thread-safe.
 */
public final class RouteChoices {
  /** A route's on-demand slots and the worst of them (host and slot break a tie of ranks). */
  private record Choice(List<String> keys, long worstRank, String worstKey) {}

  private final int limit;
  private final Map<String, Choice> byServiceModel = new HashMap<>();
  /** slot key -> the service models whose route lists it on demand. */
  private final Map<String, Set<String>> listing = new HashMap<>();

  /** @param limit the on-demand bound the choices are made with ({@link PlanSettings#routeOnDemandLimit}) */
  public RouteChoices(int limit) {
    if (limit < 0) {
      throw new IllegalArgumentException("limit: must be >= 0, was " + limit);
    }
    this.limit = limit;
  }

  /** Records the on-demand slots a service model's route now lists. */
  public void put(String serviceModel, List<String> chosen) {
    Choice old = byServiceModel.get(serviceModel);
    if (old != null && old.keys().equals(chosen)) {
      return;
    }
    remove(serviceModel);
    long worstRank = 0;
    String worstKey = null;
    long seed = Rendezvous.seed(serviceModel);
    for (String key : chosen) {
      long rank = SlotRanking.rank(seed, key);
      if (worstKey == null || !SlotRanking.outranks(rank, key, worstRank, worstKey)) {
        worstRank = rank;
        worstKey = key;
      }
      listing.computeIfAbsent(key, k -> new HashSet<>()).add(serviceModel);
    }
    byServiceModel.put(serviceModel, new Choice(List.copyOf(chosen), worstRank, worstKey));
  }

  /** Forgets a service model (its route is gone, or will be made again from scratch). */
  public void remove(String serviceModel) {
    Choice old = byServiceModel.remove(serviceModel);
    if (old == null) {
      return;
    }
    for (String key : old.keys()) {
      Set<String> of = listing.get(key);
      if (of != null) {
        of.remove(serviceModel);
        if (of.isEmpty()) {
          listing.remove(key);
        }
      }
    }
  }

  /** Forgets everything: every service model is unknown. */
  public void clear() {
    byServiceModel.clear();
    listing.clear();
  }

  /** Whether the service model's choice is recorded. */
  public boolean known(String serviceModel) {
    return byServiceModel.containsKey(serviceModel);
  }

  /** The recorded on-demand slots of a service model, best first; null when unknown. */
  public List<String> chosen(String serviceModel) {
    Choice c = byServiceModel.get(serviceModel);
    return c == null ? null : c.keys();
  }

  /** The service models whose recorded route lists this slot on demand. */
  public Set<String> listing(String slotKey) {
    Set<String> of = listing.get(slotKey);
    return of == null ? Set.of() : Collections.unmodifiableSet(of);
  }

  /**
   * Whether a slot joining the service model's candidates would be chosen: true when the route
   * lists fewer than the limit (it lists every candidate), when the slot outranks its worst entry,
   * or when the service model is unknown.
   */
  public boolean wouldTake(String serviceModel, String slotKey) {
    Choice c = byServiceModel.get(serviceModel);
    if (c == null || c.keys().size() < limit) {
      return true;
    }
    if (limit == 0) {
      return false;
    }
    long rank = SlotRanking.rank(Rendezvous.seed(serviceModel), slotKey);
    return SlotRanking.outranks(rank, slotKey, c.worstRank(), c.worstKey());
  }
}
