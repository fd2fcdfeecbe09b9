package io.partita.launcher.cluster;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Network namespaces, veth pairs and the bridge, through {@code ip}. Each group's namespace has
 * {@code lo} up and one veth end renamed {@code eth0} with the group's address; the other end is on
 * the bridge, which holds the /24's {@code .1} in this host's namespace, so every address is
 * reachable from here. Cutting a group off is taking its bridge-side end down.
 */
final class NetNs {
  private static final Pattern INET = Pattern.compile("inet (\\d+\\.\\d+\\.\\d+)\\.\\d+");

  private NetNs() {}

  static boolean available() {
    return Shell.has("ip") && Shell.run(List.of("ip", "netns", "list")).ok();
  }

  static void bridge(String name, String address) {
    Shell.check(List.of("ip", "link", "add", name, "type", "bridge"));
    Shell.check(List.of("ip", "addr", "add", address + "/24", "dev", name));
    Shell.check(List.of("ip", "link", "set", name, "up"));
  }

  /** A namespace with {@code lo} up and {@code eth0} at {@code address}, linked to {@code bridge}. */
  static void namespace(String ns, String bridge, String hostVeth, String peerVeth, String address) {
    Shell.check(List.of("ip", "netns", "add", ns));
    Shell.check(List.of("ip", "link", "add", hostVeth, "type", "veth", "peer", "name", peerVeth));
    Shell.check(List.of("ip", "link", "set", peerVeth, "netns", ns));
    Shell.check(List.of("ip", "-n", ns, "link", "set", peerVeth, "name", "eth0"));
    Shell.check(List.of("ip", "-n", ns, "addr", "add", address + "/24", "dev", "eth0"));
    Shell.check(List.of("ip", "-n", ns, "link", "set", "eth0", "up"));
    Shell.check(List.of("ip", "-n", ns, "link", "set", "lo", "up"));
    Shell.check(List.of("ip", "link", "set", hostVeth, "master", bridge));
    Shell.check(List.of("ip", "link", "set", hostVeth, "up"));
  }

  static void setLink(String link, boolean up) {
    Shell.check(List.of("ip", "link", "set", link, up ? "up" : "down"));
  }

  /** Whether the link is administratively up; false when it does not exist. */
  static boolean linkUp(String link) {
    Shell.Result r = Shell.run(List.of("ip", "-o", "link", "show", "dev", link));
    if (!r.ok()) {
      return false;
    }
    int open = r.output().indexOf('<');
    int close = r.output().indexOf('>');
    return open >= 0 && close > open && List.of(r.output().substring(open + 1, close).split(",")).contains("UP");
  }

  static List<String> namespaces() {
    List<String> out = new ArrayList<>();
    for (String line : Shell.run(List.of("ip", "netns", "list")).output().lines().toList()) {
      if (!line.isBlank()) {
        out.add(line.strip().split("\\s+")[0]);
      }
    }
    return out;
  }

  /** The names of this namespace's links ({@code veth@peer} reported as {@code veth}). */
  static List<String> links() {
    List<String> out = new ArrayList<>();
    for (String line : Shell.run(List.of("ip", "-o", "link", "show")).output().lines().toList()) {
      String[] parts = line.split(":\\s+", 3);
      if (parts.length >= 2) {
        String name = parts[1].strip();
        int at = name.indexOf('@');
        out.add(at < 0 ? name : name.substring(0, at));
      }
    }
    return out;
  }

  /** The /24s ({@code a.b.c}) of every IPv4 address in this namespace: a cluster's subnet must be none of them. */
  static Set<String> usedSubnets() {
    Set<String> out = new HashSet<>();
    for (String line : Shell.run(List.of("ip", "-o", "-4", "addr", "show")).output().lines().toList()) {
      Matcher m = INET.matcher(line);
      if (m.find()) {
        out.add(m.group(1));
      }
    }
    return out;
  }

  static Shell.Result deleteNamespace(String ns) {
    return Shell.run(List.of("ip", "netns", "del", ns));
  }

  static Shell.Result deleteLink(String link) {
    return Shell.run(List.of("ip", "link", "del", link));
  }
}
