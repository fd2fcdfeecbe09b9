package io.partita.planning.allocation;

/**
 * A weight file mounted on a slot.
 *
 * @param file the file
 * @param lastUsedSequence a logical counter (offset or sequence number of its last request, never
 *     a clock): smaller = used longer ago
 * @param inUse whether an instance uses it; such a file is never unmounted
 */
public record MountedWeight(WeightFile file, long lastUsedSequence, boolean inUse) {}
