package io.partita.testkit;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;
import org.awaitility.Awaitility;

/**
 * A single-node KRaft cluster inside the test JVM whose client listener requires SASL and whose
 * authorizer denies everything no ACL allows ({@code StandardAuthorizer},
 * {@code allow.everyone.if.no.acl.found=false}). Applications authenticate with SASL/SCRAM-SHA-256
 * users created by {@link #createUser}; the test kit's own super user ({@code plain-admin}, SASL/PLAIN,
 * from a static JAAS file it writes) creates users and ACLs through {@link #admin()}, and is also
 * the identity the node uses on its own controller listener.
 *
 * <p>Not shared: a test class starts one and closes it. Setting the JAAS file is JVM-wide
 * ({@code java.security.auth.login.config}); clients that configure {@code sasl.jaas.config}
 * themselves, as Partita's do, are unaffected.
 */
public final class SaslCluster implements AutoCloseable {
  public static final String MECHANISM = "SCRAM-SHA-256";
  private static final String LISTENER = "EXTERNAL";

  private final KafkaClusterTestKit kit;
  private boolean closed;

  private SaslCluster(KafkaClusterTestKit kit) {
    this.kit = kit;
  }

  public static SaslCluster start() throws Exception {
    KafkaExits.install(); // a broker's fault must not end the test JVM
    KafkaClusterTestKit kit = new KafkaClusterTestKit.Builder(
            new TestKitNodes.Builder().setCombined(true).setNumBrokerNodes(1).setNumControllerNodes(1)
                .setBrokerListenerName(new ListenerName(LISTENER))
                .setBrokerSecurityProtocol(SecurityProtocol.SASL_PLAINTEXT)
                // The node registers with its controller as the super user too (over PLAINTEXT it
                // would be ANONYMOUS, whom the authorizer rightly refuses).
                .setControllerSecurityProtocol(SecurityProtocol.SASL_PLAINTEXT)
                .build())
        // PLAIN for the test kit's super user (and the broker itself), SCRAM for applications.
        .setConfigProp("sasl.enabled.mechanisms", "PLAIN," + MECHANISM)
        .setConfigProp("listener.name." + LISTENER.toLowerCase() + "." + MECHANISM.toLowerCase() + ".sasl.jaas.config",
            "org.apache.kafka.common.security.scram.ScramLoginModule required;")
        .setConfigProp("offsets.topic.replication.factor", "1")
        .setConfigProp("offsets.topic.num.partitions", "2")
        .setConfigProp("transaction.state.log.replication.factor", "1")
        .setConfigProp("transaction.state.log.min.isr", "1")
        .setConfigProp("group.initial.rebalance.delay.ms", "0")
        .setConfigProp("log.cleaner.dedupe.buffer.size", String.valueOf(2 * 1024 * 1024))
        .setConfigProp("auto.create.topics.enable", "false")
        .build();
    try {
      kit.format();
      kit.startup();
      kit.waitForReadyBrokers();
    } catch (Exception e) {
      kit.close();
      throw e;
    }
    return new SaslCluster(kit);
  }

  public String bootstrapServers() {
    return kit.bootstrapServers();
  }

  /** An admin client authenticated as the super user. */
  public Admin admin() {
    return kit.admin();
  }

  /** Creates (or replaces) a SCRAM-SHA-256 user and waits until the broker knows it. */
  public void createUser(String name, String password) throws Exception {
    try (Admin admin = admin()) {
      admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion(
          name, new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), password))).all().get(30, TimeUnit.SECONDS);
      Awaitility.await("SCRAM user " + name).atMost(Duration.ofSeconds(30))
          .until(() -> admin.describeUserScramCredentials(List.of(name)).all().get(10, TimeUnit.SECONDS).containsKey(name));
    }
  }

  /** Allows a user the given operations on a resource (a literal name or a prefix). */
  public void allow(String user, ResourceType type, String name, PatternType pattern, AclOperation... operations) throws Exception {
    List<AclBinding> bindings = Arrays.stream(operations)
        .map(op -> new AclBinding(new ResourcePattern(type, name, pattern),
            new AccessControlEntry("User:" + user, "*", op, AclPermissionType.ALLOW)))
        .toList();
    try (Admin admin = admin()) {
      admin.createAcls(bindings).all().get(30, TimeUnit.SECONDS);
    }
  }

  /** The Partita settings ({@code kafka.*}) that make a component log in as this user. */
  public Map<String, String> clientSettings(String user, String password) {
    return Map.of(
        "kafka.bootstrap.servers", bootstrapServers(),
        "kafka.security.protocol", "SASL_PLAINTEXT",
        "kafka.sasl.mechanism", MECHANISM,
        "kafka.sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required username=\""
            + user + "\" password=\"" + password + "\";");
  }

  @Override
  public synchronized void close() throws Exception {
    if (!closed) {
      closed = true;
      kit.close();
    }
  }
}
