/**
 * Method 2, mapping models to kinds of hardware: which resource each model of each service runs on,
 * from the timing matrix of models by resources. {@link io.partita.planning.mapping.MappingPlanner}
 * runs the model-first and the hardware-first scheme per service and keeps the mapping with the
 * lowest bottleneck load, and reports its gap to the exact optimum where that is small enough to
 * search.
 */
package io.partita.planning.mapping;
