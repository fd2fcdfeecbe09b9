package io.partita.common;

import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The one place that names Partita's topics. Every name is built from a prefix (default {@code
 * partita}), so several Partita installations, or several tests, can share one cluster.
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
  /** Per-item results of batch jobs (JobItemResult, key = job id). */
  public String jobItems() { return prefix + ".jobs.items"; }
  public String deadLetter() { return prefix + ".deadletter"; }

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
