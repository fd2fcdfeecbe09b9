package io.partita.planning.allocation;

/** A slot that could not take an instance of a service model, and why. */
public record SlotExclusion(String serviceModelId, String slotId, String reason) {}
