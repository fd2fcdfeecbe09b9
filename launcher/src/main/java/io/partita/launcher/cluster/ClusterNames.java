package io.partita.launcher.cluster;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Every name a cluster gives the operating system, all carrying its short id ({@code pt} and six
 * hex digits of the SHA-256 of the cluster directory's absolute path), so two clusters never clash
 * and {@code down} can sweep by prefix: network namespaces {@code <id>-<group>}, the bridge
 * {@code <id>br}, veth pairs {@code <id>v<slot>} (bridge side) and {@code <id>p<slot>} (moved into
 * the namespace and renamed {@code eth0}), cgroups {@code <controller>/<id>/<group>}, and the
 * {@code -Dpartita.cluster=<id>} mark on every process's command line. Interface names stay within
 * Linux's 15 characters.
 *
 * @param id the short cluster id, e.g. {@code pt3fa9c1}
 */
public record ClusterNames(String id) {
  public static final int MAX_INTERFACE_NAME = 15;

  public ClusterNames {
    if (!id.matches("pt[0-9a-f]{6}")) {
      throw new IllegalArgumentException("not a cluster id: " + id);
    }
  }

  public static ClusterNames of(Path dir) {
    try {
      byte[] hash = MessageDigest.getInstance("SHA-256")
          .digest(dir.toAbsolutePath().normalize().toString().getBytes(StandardCharsets.UTF_8));
      return new ClusterNames("pt" + HexFormat.of().formatHex(hash).substring(0, 6));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The 9-bit number of this cluster's preferred /24 in 198.18.0.0/15. */
  public int subnetIndex() {
    return Integer.parseInt(id.substring(2), 16) % 512;
  }

  public String namespace(String group) {
    return id + "-" + group;
  }

  public String bridge() {
    return id + "br";
  }

  public String hostVeth(int slot) {
    return id + "v" + slot;
  }

  public String peerVeth(int slot) {
    return id + "p" + slot;
  }

  /** Cgroup path below a controller's mount, e.g. {@code pt3fa9c1/host-1}. */
  public String cgroup(String group) {
    return id + "/" + group;
  }

  /** The system property on every process's command line: how {@code down} finds them without a state file. */
  public String mark() {
    return "-Dpartita.cluster=" + id;
  }
}
