#!/usr/bin/env bash
# Entry point of the Partita image. `entrypoint.sh worker` runs `java -jar partita-launcher.jar
# worker`; `entrypoint.sh worker+profiler` runs both commands in this container and stops the
# container (with the first failing status) as soon as either of them exits, so the orchestrator
# restarts the pair together. Settings come from PARTITA_* environment variables (docs/deployment.md).
set -euo pipefail
JAR=/opt/partita/partita-launcher.jar
# JAVA_OPTS is a list of JVM flags; word splitting is intended.
# shellcheck disable=SC2086
run() { exec java ${JAVA_OPTS:-} -jar "$JAR" "$@"; }

if [[ $# -eq 0 || "$1" != *+* ]]; then
  run "$@"
fi

IFS='+' read -r -a commands <<<"$1"
shift
pids=()
for command in "${commands[@]}"; do
  # shellcheck disable=SC2086
  java ${JAVA_OPTS:-} -jar "$JAR" "$command" "$@" &
  pids+=("$!")
done
stop() { kill -TERM "${pids[@]}" 2>/dev/null || true; }
trap stop TERM INT
status=0
wait -n "${pids[@]}" || status=$?
stop
wait "${pids[@]}" || true
exit "$status"
