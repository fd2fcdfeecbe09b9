package io.partita.planning;

/**
 * Rendezvous (highest random weight) ranks: how much a named thing (a service model) likes a slot
 * of a host, a 64-bit mix of the names' hashes. Choosing the slots that rank highest for a name
 * moves little when slots come and go: a slot that joins is taken only where it outranks a chosen
 * one, and one that leaves gives up only what it held. Routes list the slots that rank highest for
 * their service model, and instances of a service model go, among equally good slots, to the one
 * that ranks highest for it. Stable across processes and releases ({@link String#hashCode} is
 * specified), so every planner instance and every replay ranks alike. Pure.
 */
public final class Rendezvous {

  private Rendezvous() {}

  /** The rank of {@code host}'s slot {@code slot} for {@code name}. */
  public static long rank(String name, String host, String slot) {
    return rank(seed(name), host.hashCode(), slot.hashCode());
  }

  /** The part of {@link #rank} that depends on the name alone, to take once for many slots. */
  public static long seed(String name) {
    return mix(name.hashCode());
  }

  /** {@link #rank} from the name's seed and the hashes of the host's and the slot's names. */
  public static long rank(long seed, int hostHash, int slotHash) {
    return mix(mix(seed + hostHash) + slotHash);
  }

  /** SplitMix64's finaliser: neighbouring inputs (cpu-0, cpu-1) land far apart. */
  private static long mix(long h) {
    h = (h ^ (h >>> 30)) * 0xbf58476d1ce4e5b9L;
    h = (h ^ (h >>> 27)) * 0x94d049bb133111ebL;
    return h ^ (h >>> 31);
  }
}
