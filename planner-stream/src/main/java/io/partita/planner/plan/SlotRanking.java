package io.partita.planner.plan;

import io.partita.planning.Rendezvous;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Set;

/**
 * The slots of one base model ({@code host/slot} keys), their host's and slot's name hashes taken
 * once from the key (no substrings), so that choosing the on-demand slots of each of its service
 * models ({@link RoutePlans#highestRankedKeys}) costs one mix and, for most slots, one comparison of
 * two longs, not a parse, two string hashes and a priority-queue step with boxed comparators. A planning pass that re-routes a base model's service models builds
 * one ranking and shares it. Immutable; the choice is the same as {@link RoutePlans#highestRanked}
 * on the same slots.
 */
public final class SlotRanking {
  private static final char SEP = Keys.SEP.charAt(0);

  private final String[] keys;
  private final int[] hostHashes;
  private final int[] slotHashes;

  /** @param slotKeys distinct {@code host/slot} keys, in any order */
  public SlotRanking(Collection<String> slotKeys) {
    int n = slotKeys.size();
    keys = new String[n];
    hostHashes = new int[n];
    slotHashes = new int[n];
    int i = 0;
    for (String key : slotKeys) {
      keys[i] = key;
      long hashes = hashes(key);
      hostHashes[i] = (int) (hashes >>> 32);
      slotHashes[i] = (int) hashes;
      i++;
    }
  }

  /**
   * The {@code limit} slots, other than {@code excluded}, that rank highest for {@code serviceModel}
   * ({@link Rendezvous#rank}; ties by host, then slot), best first; all of them when there are no
   * more than {@code limit}.
   */
  public List<String> highest(String serviceModel, Set<String> excluded, int limit) {
    if (limit == 0) {
      return new ArrayList<>();
    }
    long seed = Rendezvous.seed(serviceModel);
    // A binary heap of the limit best so far, the worst at the root: once it is full, most slots
    // rank below its root and are dismissed by one comparison of longs.
    int capacity = Math.min(limit, keys.length);
    long[] rank = new long[capacity];
    int[] at = new int[capacity];
    int size = 0;
    for (int i = 0; i < keys.length; i++) {
      long r = Rendezvous.rank(seed, hostHashes[i], slotHashes[i]);
      if (size == limit && r < rank[0]) {
        continue;
      }
      if (excluded.contains(keys[i])) {
        continue;
      }
      if (size < limit) {
        // sift up: a parent ranks below its children
        int c = size++;
        while (c > 0) {
          int p = (c - 1) / 2;
          if (!outranks(rank[p], keys[at[p]], r, keys[i])) {
            break;
          }
          rank[c] = rank[p];
          at[c] = at[p];
          c = p;
        }
        rank[c] = r;
        at[c] = i;
      } else if (outranks(r, keys[i], rank[0], keys[at[0]])) {
        // the worst makes room: sift down
        int c = 0;
        while (true) {
          int l = 2 * c + 1;
          if (l >= size) {
            break;
          }
          int w = l + 1 < size && outranks(rank[l], keys[at[l]], rank[l + 1], keys[at[l + 1]]) ? l + 1 : l;
          if (!outranks(r, keys[i], rank[w], keys[at[w]])) {
            break;
          }
          rank[c] = rank[w];
          at[c] = at[w];
          c = w;
        }
        rank[c] = r;
        at[c] = i;
      }
    }
    Integer[] order = new Integer[size];
    for (int j = 0; j < size; j++) {
      order[j] = j;
    }
    Arrays.sort(order, (x, y) -> x.equals(y) ? 0 : outranks(rank[x], keys[at[x]], rank[y], keys[at[y]]) ? -1 : 1);
    List<String> out = new ArrayList<>(size);
    for (Integer j : order) {
      out.add(keys[at[j]]);
    }
    return out;
  }

  /** A slot's rank for a service model ({@link Rendezvous#rank}) from its key and the service model's seed. */
  static long rank(long serviceSeed, String key) {
    long hashes = hashes(key);
    return Rendezvous.rank(serviceSeed, (int) (hashes >>> 32), (int) hashes);
  }

  /**
   * {@code host.hashCode()} in the high and {@code slot.hashCode()} in the low 32 bits, for a key
   * {@code host/slot} (split at its last separator), without making the two strings: {@link
   * String#hashCode} is specified as {@code s[0]*31^(n-1) + ... + s[n-1]}.
   */
  static long hashes(String key) {
    int prefix = 0; // the hash of the key so far
    int host = 0;
    int slot = 0;
    boolean cut = false;
    for (int i = 0; i < key.length(); i++) {
      char c = key.charAt(i);
      if (c == SEP) {
        host = prefix; // the host, if this separator is the last one
        slot = 0;
        cut = true;
      } else {
        slot = 31 * slot + c;
      }
      prefix = 31 * prefix + c;
    }
    if (!cut) {
      throw new IllegalArgumentException("slot key " + key + ": no '" + SEP + "' between host and slot");
    }
    return ((long) host << 32) | (slot & 0xffffffffL);
  }

  /**
   * Whether the slot of key {@code a} (rank {@code ra}) ranks above that of {@code b}: higher rank,
   * then smaller host, then smaller slot. Equal ranks are rare: only they split the keys.
   */
  static boolean outranks(long ra, String a, long rb, String b) {
    if (ra != rb) {
      return ra > rb;
    }
    int cutA = a.lastIndexOf(Keys.SEP);
    int cutB = b.lastIndexOf(Keys.SEP);
    int byHost = a.substring(0, cutA).compareTo(b.substring(0, cutB));
    return byHost != 0 ? byHost < 0 : a.substring(cutA + 1).compareTo(b.substring(cutB + 1)) < 0;
  }
}
