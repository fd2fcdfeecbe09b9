/**
 * How a base model's request-topic partitions are shared out among the workers of the consumer
 * group: in proportion to the capacity each worker's slots are planned to have, so a slow host owns
 * fewer partitions and gets fewer requests. Pure: no Kafka here; {@code kafka/CapacityAssignor}
 * carries it into Kafka's group protocol.
 */
package io.partita.worker.balance;
