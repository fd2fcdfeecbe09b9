package io.partita.common;

import io.partita.avro.BatchJob;
import io.partita.avro.DeadLetter;
import io.partita.avro.Demand;
import io.partita.avro.HostEnvironment;
import io.partita.avro.HostLiveness;
import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.avro.JobItemResult;
import io.partita.avro.JobItemResults;
import io.partita.avro.JobStatus;
import io.partita.avro.ModelVersion;
import io.partita.avro.PartitionPlan;
import io.partita.avro.ProfileRequest;
import io.partita.avro.ProfileStatus;
import io.partita.avro.Route;
import io.partita.avro.ServiceMapping;
import io.partita.avro.ServiceModel;
import io.partita.avro.SlotAssignment;
import io.partita.avro.SlotStatus;
import io.partita.avro.TimingEvent;
import io.partita.avro.VersionChoice;
import io.partita.common.serde.Codecs;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;
import org.apache.avro.specific.SpecificRecord;

/**
 * The one place that names Partita's topics. Every name is built from a prefix (default {@code
 * partita}), so several Partita installations, or several tests, can share one cluster.
 *
 * <p>Each name comes in two forms: the name alone ({@code profileTimings()}), for admin calls,
 * subscriptions and stream topologies that move bytes, and a {@link Topic} handle bound to the
 * codec of its record type ({@code profileTimings(codecs)}), for every call site that encodes or
 * decodes, so the pairing of a topic with its record type is written once, here.
 */
public final class Topics {
  public static final String DEFAULT_PREFIX = "partita";
  private static final Pattern LEGAL = Pattern.compile("[A-Za-z0-9._-]+");

  private final String prefix;

  public Topics(String prefix) {
    this.prefix = checkName("topic prefix", prefix);
  }

  public static Topics withDefaultPrefix() {
    return new Topics(DEFAULT_PREFIX);
  }

  public String prefix() {
    return prefix;
  }

  public String catalogModels() { return prefix + ".catalog.models"; }
  public String catalogServices() { return prefix + ".catalog.services"; }
  public String hostEnvironments() { return prefix + ".hosts.environments"; }
  /** Whether each host's worker is in the request consumer group (HostLiveness, key = host), from the planner's host watcher. */
  public String hostLiveness() { return prefix + ".hosts.liveness"; }
  public String workerStatus() { return prefix + ".workers.status"; }
  public String profileRequests() { return prefix + ".profile.requests"; }
  public String profileTimings() { return prefix + ".profile.timings"; }
  public String profileStatus() { return prefix + ".profile.status"; }
  public String planPartitions() { return prefix + ".plan.partitions"; }
  public String planMappings() { return prefix + ".plan.mappings"; }
  public String planVersions() { return prefix + ".plan.versions"; }
  public String planAssignments() { return prefix + ".plan.assignments"; }
  public String planRoutes() { return prefix + ".plan.routes"; }
  /** Traffic per service model (Demand, key = service model), which the planner splits pools by. */
  public String demand() { return prefix + ".demand"; }
  public String jobs() { return prefix + ".jobs"; }
  public String jobStatus() { return prefix + ".jobs.status"; }
  /** Results of batch jobs (JobItemResults: the rows of one request per record, key = job id). */
  public String jobItems() { return prefix + ".jobs.items"; }
  public String deadLetter() { return prefix + ".deadletter"; }

  public Topic<ModelVersion> catalogModels(Codecs codecs) { return bind(catalogModels(), ModelVersion.class, codecs); }
  public Topic<ServiceModel> catalogServices(Codecs codecs) { return bind(catalogServices(), ServiceModel.class, codecs); }
  public Topic<HostEnvironment> hostEnvironments(Codecs codecs) { return bind(hostEnvironments(), HostEnvironment.class, codecs); }
  public Topic<HostLiveness> hostLiveness(Codecs codecs) { return bind(hostLiveness(), HostLiveness.class, codecs); }
  public Topic<SlotStatus> workerStatus(Codecs codecs) { return bind(workerStatus(), SlotStatus.class, codecs); }
  public Topic<ProfileRequest> profileRequests(Codecs codecs) { return bind(profileRequests(), ProfileRequest.class, codecs); }
  public Topic<TimingEvent> profileTimings(Codecs codecs) { return bind(profileTimings(), TimingEvent.class, codecs); }
  public Topic<ProfileStatus> profileStatus(Codecs codecs) { return bind(profileStatus(), ProfileStatus.class, codecs); }
  public Topic<PartitionPlan> planPartitions(Codecs codecs) { return bind(planPartitions(), PartitionPlan.class, codecs); }
  public Topic<ServiceMapping> planMappings(Codecs codecs) { return bind(planMappings(), ServiceMapping.class, codecs); }
  public Topic<VersionChoice> planVersions(Codecs codecs) { return bind(planVersions(), VersionChoice.class, codecs); }
  public Topic<SlotAssignment> planAssignments(Codecs codecs) { return bind(planAssignments(), SlotAssignment.class, codecs); }
  public Topic<Route> planRoutes(Codecs codecs) { return bind(planRoutes(), Route.class, codecs); }
  public Topic<Demand> demand(Codecs codecs) { return bind(demand(), Demand.class, codecs); }
  public Topic<BatchJob> jobs(Codecs codecs) { return bind(jobs(), BatchJob.class, codecs); }
  public Topic<JobStatus> jobStatus(Codecs codecs) { return bind(jobStatus(), JobStatus.class, codecs); }
  public Topic<JobItemResults> jobItems(Codecs codecs) { return bind(jobItems(), JobItemResults.class, codecs); }
  /** {@link #jobItems()} as written before JobItemResults: one JobItemResult per record (readers still take them). */
  public Topic<JobItemResult> jobItemsOneByOne(Codecs codecs) { return bind(jobItems(), JobItemResult.class, codecs); }
  public Topic<DeadLetter> deadLetter(Codecs codecs) { return bind(deadLetter(), DeadLetter.class, codecs); }

  /** {@link #requests(String)} bound to its codec. */
  public Topic<InferenceRequest> requests(String baseModel, Codecs codecs) {
    return bind(requests(baseModel), InferenceRequest.class, codecs);
  }

  /** {@link #replies(String)} bound to its codec. */
  public Topic<InferenceReply> replies(String client, Codecs codecs) {
    return bind(replies(client), InferenceReply.class, codecs);
  }

  private static <V extends SpecificRecord> Topic<V> bind(String name, Class<V> type, Codecs codecs) {
    return new Topic<>(name, codecs.codec(type));
  }

  /**
   * Requests for every service model of one base model: one topic per base model, however many
   * service models (weight files) it carries, each request naming its service model in the record
   * and in the {@code service-model} header. For a model served without weight files the service
   * model is the model, so the name is the one a producer expects. Any Kafka producer may write here.
   */
  public String requests(String baseModel) {
    return prefix + ".requests." + checkName("base model", baseModel);
  }

  /** Replies for one client (a gateway instance, a Java client, a script). */
  public String replies(String client) {
    return prefix + ".replies." + checkName("client id", client);
  }

  /** The consumer group of the workers' request consumers: its members share the request topics' partitions. */
  public String workersGroup() {
    return prefix + ".workers";
  }

  private static final String WORKER_CLIENT = "partita-requests-";

  /** The client id of a host's request consumer, which names the host in the workers' group. */
  public static String workerClientId(String host) {
    return WORKER_CLIENT + checkName("host id", host);
  }

  /** The host a member of the workers' group runs on, from its client id; null for another client. */
  public static String hostOfWorkerClient(String clientId) {
    return clientId != null && clientId.startsWith(WORKER_CLIENT) && clientId.length() > WORKER_CLIENT.length()
        ? clientId.substring(WORKER_CLIENT.length()) : null;
  }

  /** Matches every request topic, for workers that serve all base models. */
  public Pattern requestTopicPattern() {
    return Pattern.compile(Pattern.quote(prefix + ".requests.") + "[A-Za-z0-9._-]+");
  }

  /** The base model a request topic carries, or null when the topic is not a request topic. */
  public String baseModelOf(String requestTopic) {
    String head = prefix + ".requests.";
    return requestTopic.startsWith(head) ? requestTopic.substring(head.length()) : null;
  }

  /** The topics every component expects to exist, with how they are kept. */
  public List<TopicSpec> infrastructure() {
    return List.of(
        TopicSpec.compacted(catalogModels()),
        TopicSpec.compacted(catalogServices()),
        TopicSpec.compacted(hostEnvironments()),
        TopicSpec.compacted(hostLiveness()),
        TopicSpec.compacted(workerStatus()),
        TopicSpec.stream(profileRequests(), 1),
        TopicSpec.stream(profileTimings(), 1),
        TopicSpec.compacted(profileStatus()),
        TopicSpec.compacted(planPartitions()),
        TopicSpec.compacted(planMappings()),
        TopicSpec.compacted(planVersions()),
        TopicSpec.compacted(planAssignments()),
        TopicSpec.compacted(planRoutes()),
        TopicSpec.compacted(demand()),
        TopicSpec.stream(jobs(), 1),
        TopicSpec.compacted(jobStatus()),
        TopicSpec.stream(jobItems(), 1),
        TopicSpec.stream(deadLetter(), 1));
  }

  static String checkName(String what, String name) {
    Objects.requireNonNull(name, what);
    if (!LEGAL.matcher(name).matches() || name.length() > 200) {
      throw new IllegalArgumentException(
          what + " '" + name + "' is not a legal Kafka topic part: use letters, digits, '.', '_' or '-'");
    }
    return name;
  }
}
