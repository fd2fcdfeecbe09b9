/**
 * Method 4, choosing a version for a host: which version of a model one host runs. {@link
 * io.partita.planning.version.VersionSelector} ranks the versions the host can run by its own
 * timings, or by timings predicted from the most similar measured host ({@link
 * io.partita.planning.version.HostSimilarity}, also used by {@link
 * io.partita.planning.version.ProfilePrediction} for the partition profile of a host not measured
 * yet).
 */
package io.partita.planning.version;
