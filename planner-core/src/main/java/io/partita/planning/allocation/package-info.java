/**
 * Method 3, service models, instances and weight files: which slot each instance of a service
 * model is allocated to, which request goes to which instance, and which weight files are unmounted
 * when a slot's memory is short. {@link io.partita.planning.allocation.InstanceAllocator} places the
 * instances on slots of the same base model, {@link io.partita.planning.allocation.InstanceRouter}
 * routes a request to the least loaded ready instance, and {@link
 * io.partita.planning.allocation.WeightFileEvictor} picks the weight files to unmount, least recently
 * used first.
 */
package io.partita.planning.allocation;
