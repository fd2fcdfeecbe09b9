package io.partita.worker.slot;

import io.partita.avro.InferenceRequest;
import io.partita.avro.Tensor;
import io.partita.models.repo.RepositoryIndex;
import io.partita.models.repo.ServiceModelEntry;
import io.partita.models.repo.TensorSpec;
import io.partita.models.repo.VersionEntry;
import io.partita.worker.serving.RequestCheck;
import io.partita.worker.serving.WeightFileMounts;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A short synthetic load through the real slot path, so that the JIT has compiled it before the
 * first client's request: requests of zeros shaped by the version's signature, queued on each slot
 * itself (not routed), batched and run as any request (weight files held, the run, the reply
 * built), answered to nobody. Each slot gets {@code requests} of them, in waves of a full batch (up
 * to 8 rows) that wait for each other, cycling through the service models the slot holds, so
 * batches that mix weight files run too.
 *
 * <p>Not a check: a slot whose warm-up fails (a model whose inputs cannot be made of zeros, an input
 * of strings) still serves; the failure is reported in the outcome. The slots' own counters (answered,
 * inference metrics) include the warm-up's requests; the worker's replies do not (nothing is produced).
 * Their serving evidence does not: each warmed slot's serving window begins again after its
 * warm-up ({@link Slot#resetServingWindow}), since the planner reads that window as what the running
 * grouping serves at, and a cold JIT's runs of zeros are not.
 */
final class WarmUp {
  /** The largest wave: one full batch of one-row requests, as a busy slot runs. */
  private static final int WAVE = 8;

  /**
   * What a warm-up did.
   *
   * @param slots slots warmed up
   * @param requests requests answered
   * @param failed of those, answered with an error
   * @param millis how long it took
   * @param problem the first error or reason a slot was passed over, or null
   */
  record Outcome(int slots, int requests, int failed, long millis, String problem) {}

  private WarmUp() {}

  static Outcome run(RepositoryIndex index, List<Slot> slots, int requests, Duration timeout) throws InterruptedException {
    long start = System.nanoTime();
    long deadline = start + timeout.toNanos();
    AtomicInteger answered = new AtomicInteger();
    AtomicInteger failed = new AtomicInteger();
    AtomicReference<String> problem = new AtomicReference<>();
    List<Target> targets = new ArrayList<>();
    for (Slot slot : slots) {
      if (slot.running()) {
        Optional<Target> target = Target.of(index, slot);
        if (target.isPresent()) {
          targets.add(target.get());
        } else {
          problem.compareAndSet(null, "slot " + slot.spec().name() + " holds no service model whose inputs can be made of zeros");
        }
      }
    }
    if (requests <= 0 || targets.isEmpty()) {
      return new Outcome(0, 0, 0, 0, problem.get());
    }
    int[] sent = new int[targets.size()];
    int n = 0;
    while (System.nanoTime() < deadline) {
      int[] sizes = new int[targets.size()];
      int total = 0;
      for (int t = 0; t < targets.size(); t++) {
        sizes[t] = Math.min(targets.get(t).wave(), requests - sent[t]);
        total += sizes[t];
      }
      if (total == 0) {
        break;
      }
      CountDownLatch done = new CountDownLatch(total);
      for (int t = 0; t < targets.size(); t++) {
        Target target = targets.get(t);
        Slot slot = target.slot();
        for (int i = 0; i < sizes[t]; i++) {
          InferenceRequest request = target.request("warm-up-" + slot.spec().slot() + "-" + n, n++);
          long now = System.currentTimeMillis();
          Job job = new Job(request, now, now, System.nanoTime(), Long.MAX_VALUE, reply -> {
            answered.incrementAndGet();
            if (reply.getError() != null) {
              failed.incrementAndGet();
              problem.compareAndSet(null, "slot " + slot.spec().name() + ": " + reply.getError().getMessage());
            }
            done.countDown();
          });
          if (!slot.offer(job, RequestCheck.batching(slot.spec().version(), request))) {
            done.countDown(); // the slot is stopping: nothing more to warm there
          }
        }
        sent[t] += sizes[t];
      }
      if (!done.await(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
        problem.compareAndSet(null, "not every slot answered its warm-up within " + timeout.toMillis() + " ms");
        break;
      }
    }
    // The warm-up served no one: its runs must not be read as the slots' serving rate.
    targets.forEach(t -> t.slot().resetServingWindow());
    return new Outcome(targets.size(), answered.get(), failed.get(), (System.nanoTime() - start) / 1_000_000, problem.get());
  }

  /** One slot and the synthetic requests it is warmed with. */
  private record Target(Slot slot, List<String> serviceModels, List<Tensor> inputs) {
    int wave() {
      return Math.max(1, Math.min(WAVE, slot.spec().maxRows()));
    }

    /** The {@code k}-th request: the slot's service models in turn. */
    InferenceRequest request(String id, int k) {
      return InferenceRequest.newBuilder().setId(id).setServiceModel(serviceModels.get(k % serviceModels.size())).setInputs(inputs)
          .build();
    }

    /**
     * The slot's service models with a usable mount (or the base model's, mounted here for the
     * warm-up when the slot holds none) and one row of zeros for its version; empty when no request
     * can be made (an input of strings, say).
     */
    static Optional<Target> of(RepositoryIndex index, Slot slot) {
      VersionEntry version = slot.spec().version();
      List<Tensor> inputs = new ArrayList<>();
      for (TensorSpec spec : version.signature().inputs()) {
        Optional<Tensor> zeros = zeros(spec);
        if (zeros.isEmpty()) {
          return Optional.empty();
        }
        inputs.add(zeros.get());
      }
      List<String> names = new ArrayList<>();
      for (SlotSpec.Instance i : slot.instances()) {
        Optional<WeightFileMounts.Mount> m = slot.mount(i.serviceModel());
        if (m.isPresent() && m.get().state() != WeightFileMounts.State.NOT_READY) {
          names.add(i.serviceModel());
        }
      }
      if (names.isEmpty()) {
        // a slot the plan gave no service model: the base model's own (no weight file first), mounted as a request would
        Optional<ServiceModelEntry> any = index.serviceModels().values().stream()
            .filter(e -> e.baseModel().equals(slot.spec().model()))
            .min(Comparator.comparing((ServiceModelEntry e) -> e.weightFile().isPresent()).thenComparing(ServiceModelEntry::name));
        if (any.isEmpty()) {
          return Optional.empty();
        }
        Optional<WeightFileMounts.Mount> m = OnDemandMounts.mount(index, any.get().name(), slot);
        if (m.isEmpty() || m.get().state() == WeightFileMounts.State.NOT_READY) {
          return Optional.empty();
        }
        names.add(any.get().name());
      }
      InferenceRequest probe = InferenceRequest.newBuilder().setId("warm-up").setServiceModel(names.get(0)).setInputs(inputs).build();
      if (RequestCheck.problem(version, probe).isPresent()) {
        return Optional.empty();
      }
      return Optional.of(new Target(slot, List.copyOf(names), List.copyOf(inputs)));
    }

    /** One row of zeros for an input: its dynamic dimensions 1; empty for an input of strings or of an unknown type. */
    private static Optional<Tensor> zeros(TensorSpec spec) {
      if (spec.type().byteSize() == 0) {
        return Optional.empty();
      }
      List<Long> shape = new ArrayList<>();
      long elements = 1;
      for (long d : spec.shape()) {
        long size = d < 0 ? 1 : d;
        shape.add(size);
        elements = Math.multiplyExact(elements, size);
      }
      if (elements * spec.type().byteSize() > (1 << 24)) {
        return Optional.empty(); // a fixed input of more than 16 MiB: not a warm-up's business
      }
      return Optional.of(Tensor.newBuilder().setName(spec.name()).setDatatype(spec.type().oipDatatype()).setShape(shape)
          .setData(ByteBuffer.wrap(new byte[(int) (elements * spec.type().byteSize())])).build());
    }
  }
}
