package io.partita.planning;

/** A slot that could not take an instance of a service model, and why. */
public record SlotExclusion(String serviceModelId, String slotId, String reason) {}
