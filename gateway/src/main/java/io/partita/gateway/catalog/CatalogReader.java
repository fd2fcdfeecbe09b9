package io.partita.gateway.catalog;

import io.partita.avro.ModelVersion;
import io.partita.avro.ServiceModel;
import io.partita.common.Topic;
import io.partita.common.health.LoopGuard;
import io.partita.common.kafka.TopicFollower;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the catalog for a gateway without a model repository: the compacted
 * {@code <prefix>.catalog.models} and {@code <prefix>.catalog.services} are followed from the
 * beginning ({@link TopicFollower}: assigned, no consumer group) into a {@link CatalogView}, rebuilt
 * once per poll that brought records, so a model published or withdrawn while the gateway runs is
 * offered or refused from the next call on. A record that cannot be decoded (or that throws
 * anything) is counted, summarised in the log and passed over; the previous value of its key stays.
 * A failing poll makes the loop NOT_READY while it lasts; its state is in its {@link LoopGuard}.
 */
public final class CatalogReader implements Runnable, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(CatalogReader.class);

  private final String modelsTopic;
  private final String servicesTopic;
  private final Topic<ModelVersion> versions;
  private final Topic<ServiceModel> services;
  private final CatalogView view;
  private final TopicFollower follower;

  public CatalogReader(Consumer<String, byte[]> consumer, Topic<ModelVersion> versions, Topic<ServiceModel> services,
      CatalogView view, LoopGuard guard) {
    this.modelsTopic = versions.name();
    this.servicesTopic = services.name();
    this.versions = versions;
    this.services = services;
    this.view = view;
    this.follower = new TopicFollower(consumer, TopicFollower.Settings.fromBeginning("a catalog record", modelsTopic, servicesTopic),
        guard, new TopicFollower.Reader() {
          @Override
          public void apply(ConsumerRecord<String, byte[]> record) {
            CatalogReader.this.apply(record);
          }

          @Override
          public void applied() {
            if (view.rebuild() && CatalogReader.this.caughtUp().isDone()) {
              log.info("Catalog changed: now offering {}", view.current().serviceModels().keySet());
            }
          }

          @Override
          public void caughtUp() {
            view.rebuild();
            log.info("Catalog caught up: {} model(s), service models {} from {} and {}", view.current().models().size(),
                view.current().serviceModels().keySet(), modelsTopic, servicesTopic);
          }
        });
  }

  /** Completes once both topics have been read up to the end they had when reading started. */
  public CompletableFuture<Void> caughtUp() {
    return follower.caughtUp();
  }

  @Override
  public void run() {
    follower.run();
  }

  /** Applies one record to the view; throws when it cannot (the follower passes it over). */
  private void apply(ConsumerRecord<String, byte[]> record) {
    if (record.key() == null) {
      throw new IllegalArgumentException("a catalog record without a key");
    }
    boolean models = record.topic().equals(modelsTopic);
    if (record.value() == null) {
      if (models) {
        view.putVersion(record.key(), null);
      } else {
        view.putService(record.key(), null);
      }
      return;
    }
    if (models) {
      view.putVersion(record.key(), versions.decode(record.value()));
    } else {
      view.putService(record.key(), services.decode(record.value()));
    }
  }

  @Override
  public void close() {
    follower.close();
  }
}
