package io.partita.gateway.jobs;

import java.nio.file.Path;
import java.util.Optional;

/**
 * Batch job settings, a group of the gateway's settings ({@code GatewayConfig.jobs}); here, with the
 * jobs, so that the job endpoints read them without reaching up to the gateway's assembly.
 *
 * @param enabled whether this gateway accepts and runs jobs ({@code gateway.jobs.enabled})
 * @param share the largest share of {@code maxInFlight} job items may hold ({@code gateway.jobs.share})
 * @param inputDir where {@code POST /v2/jobs?file=NAME} may read files ({@code gateway.jobs.input.dir}); empty = off
 * @param maxBodyBytes largest job input, body or file ({@code gateway.jobs.max.body.bytes})
 * @param maxItems most items (lines) in one job ({@code gateway.jobs.max.items})
 * @param itemTimeoutMs deadline of one item's request ({@code gateway.jobs.item.timeout.ms})
 * @param retries how many times an item whose deadline passed is sent again ({@code gateway.jobs.retries})
 * @param packRows the most rows one job request carries, stacked along the batch dimension, for a
 *     model whose first dimension is dynamic ({@code gateway.jobs.pack.rows}, default 64; 1 sends
 *     every row alone)
 */
public record JobsConfig(boolean enabled, double share, Optional<Path> inputDir, long maxBodyBytes, int maxItems,
    long itemTimeoutMs, int retries, int packRows) {}
