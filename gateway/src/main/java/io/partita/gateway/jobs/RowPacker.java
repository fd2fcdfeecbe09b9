package io.partita.gateway.jobs;

import io.partita.avro.JobItem;
import io.partita.common.packing.PackRule;
import io.partita.common.packing.Rows;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Groups a job's rows, as they are read in input order, into {@link Pack}s of at most
 * {@link PackRule#maxRows()} rows and {@link PackRule#maxBytes()} bytes. Pure: no Kafka, no clock.
 *
 * <p>Only rows of one layout share a pack: the same input names and datatypes, every dimension but
 * the first equal, and the same outputs asked for. A row is sent alone when the model's first
 * dimension is fixed ({@link PackRule#packs()} is false), when its inputs disagree on their first
 * dimension, or when it is bigger than a pack on its own. One pack is open per layout; a pack is
 * handed out as soon as the next row of its layout would not fit, and {@link #flush} hands out
 * the rest. Within a layout, members keep input order.
 */
public final class RowPacker {
  private final PackRule rule;
  private final Map<String, Open> open = new LinkedHashMap<>();

  public RowPacker(PackRule rule) {
    this.rule = rule;
  }

  private static final class Open {
    final List<Pack.Member> members = new ArrayList<>();
    int rows;
    long bytes;
  }

  /** Adds the row {@code index}; returns the packs now ready to send (none, one or two), in order. */
  public List<Pack> add(int index, JobItem item) {
    if (!rule.packs()) {
      return List.of(Pack.alone(index, item));
    }
    String layout = layout(item);
    int rows = rows(item);
    if (layout == null || rows < 1) {
      return List.of(Pack.alone(index, item));
    }
    long bytes = Math.max(inputBytes(item), rows * rule.outputBytesPerRow(item.getOutputs()));
    if (rows > rule.maxRows() || bytes > rule.maxBytes()) {
      return List.of(Pack.alone(index, item));
    }
    List<Pack> ready = new ArrayList<>(2);
    Open pack = open.get(layout);
    if (pack != null && (pack.rows + rows > rule.maxRows() || pack.bytes + bytes > rule.maxBytes())) {
      ready.add(new Pack(pack.members));
      pack = null;
    }
    if (pack == null) {
      pack = new Open();
      open.put(layout, pack);
    }
    pack.members.add(new Pack.Member(index, item, rows));
    pack.rows += rows;
    pack.bytes += bytes;
    if (pack.rows >= rule.maxRows()) {
      ready.add(new Pack(pack.members));
      open.remove(layout);
    }
    return ready;
  }

  /** Every pack still open, oldest first; the packer is empty afterwards. */
  public List<Pack> flush() {
    List<Pack> rest = new ArrayList<>(open.size());
    open.values().stream().sorted(Comparator.comparingInt(o -> o.members.get(0).index()))
        .forEach(o -> rest.add(new Pack(o.members)));
    open.clear();
    return rest;
  }

  /** Rows held in open packs. */
  public int pendingRows() {
    return open.values().stream().mapToInt(o -> o.rows).sum();
  }

  /** What rows must share to be packed together ({@link Rows#layout}), or null when this row cannot share. */
  static String layout(JobItem item) {
    return Rows.layout(item.getInputs(), item.getOutputs());
  }

  /** The first dimension all the row's inputs share, or -1 when they disagree (or there is none). */
  static int rows(JobItem item) {
    return Rows.rows(item.getInputs());
  }

  private static long inputBytes(JobItem item) {
    return Rows.bytes(item.getInputs());
  }
}
