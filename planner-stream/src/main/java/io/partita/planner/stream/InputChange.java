package io.partita.planner.stream;

import io.partita.planner.plan.InputTables;

/**
 * One write of an input store, decoded, as the fold processors hand it to the planning processor
 * (in the stream thread, right after the write): {@code value} null removes the key.
 */
record InputChange(InputTables.Table table, String key, Object value) {}
