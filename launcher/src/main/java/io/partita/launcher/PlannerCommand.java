package io.partita.launcher;

import io.partita.common.config.Settings;
import io.partita.common.serde.Codecs;
import io.partita.models.repo.ModelRepository;
import io.partita.planner.PlannerConfig;
import io.partita.planner.PlannerService;
import io.partita.planner.catalog.CatalogPublisher;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "planner", mixinStandardHelpOptions = true,
    description = {"Run the planner (Kafka Streams) against an existing Kafka cluster. It keeps the plan tables <prefix>.plan.{versions,mappings,partitions,assignments,routes} up to date from timings, the catalog, host environments, slot status and demand. See docs/planner.md."})
final class PlannerCommand implements Callable<Integer> {
  private static final Logger log = LoggerFactory.getLogger(PlannerCommand.class);

  @Mixin CommonOptions common;

  @Option(names = "--model-repo", paramLabel = "DIR",
      description = "Publish this model repository's catalog (models, versions, service models) at start, and again"
          + " every catalog.rescan.interval.ms when that is set (default 0: once).")
  Path modelRepo;

  @Option(names = "--base-uri", paramLabel = "URI", description = "With --model-repo: publish the model and weight files as"
      + " URI/<path in the repository> (catalog.base-uri), e.g. the address of a web server that serves the repository.")
  String baseUri;

  @Option(names = "--state-dir", paramLabel = "DIR", description = "Kafka Streams state directory (planner.state.dir).")
  Path stateDir;

  @Option(names = "--standby-replicas", description = "Standby replicas of the planner's state (planner.standby.replicas).")
  Integer standbys;

  @Override
  public Integer call() throws Exception {
    Map<String, String> flags = new HashMap<>();
    flags.put("planner.state.dir", stateDir == null ? null : stateDir.toString());
    flags.put("planner.standby.replicas", standbys == null ? null : standbys.toString());
    flags.put(CatalogPublisher.BASE_URI_KEY, baseUri);
    Settings settings = common.settings(Map.of(), flags);
    Services.logSettings("planner", settings);
    PlannerConfig config = PlannerConfig.from(settings);
    Services services = new Services();
    services.start(new PlannerService(config));
    if (modelRepo != null) {
      // Published once, or kept in step with the directory every catalog.rescan.interval.ms, as
      // partita local does; two planners publishing the same repository write the same records.
      CatalogSync sync = services.start(new CatalogSync(config, modelRepo,
          settings.longValue(CatalogSync.INTERVAL_KEY, 0, 0, 3_600_000),
          CatalogPublisher.baseUri(settings.string(CatalogPublisher.BASE_URI_KEY, null))));
      log.info("Published the catalog of {} ({} records){}", modelRepo, sync.firstPublished(),
          sync.intervalMs() > 0 ? "; rescanned every " + sync.intervalMs() + " ms (" + CatalogSync.INTERVAL_KEY + ")" : "");
    }
    return services.awaitShutdown();
  }

  static int publishCatalog(PlannerConfig config, Path repo, Codecs codecs) {
    return publishCatalog(config, repo, codecs, Optional.empty());
  }

  static int publishCatalog(PlannerConfig config, Path repo, Codecs codecs, Optional<String> baseUri) {
    Properties p = new Properties();
    p.putAll(config.kafka().clients());
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(p)) {
      return CatalogPublisher.publish(producer, ModelRepository.scan(repo), config.topics(), codecs, baseUri);
    }
  }
}
