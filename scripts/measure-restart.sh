#!/usr/bin/env bash
# Measures Partita's restart after a crash: starts `partita local` with its own data directory (and,
# as ./partita does, a class-data-sharing archive written by a first run that ends cleanly), waits
# until infer on demo-a answers 200, then RESTARTS times: kill -9 the JVM, start it again on
# the same data and time the seconds from the restart to the first 200. For each restart it prints
# when each phase was reached (seconds after the restart, read from the log's timestamps):
#   log      first log line (the JVM has loaded Kafka and its controller is active)
#   broker   the embedded broker is up ("Embedded Kafka broker listening")
#   worker   the worker's start-up slots are open and it consumes ("Inference worker ... runs")
#   routes   the gateway has read the plan's routes ("Route table caught up")
#   plan     the worker applies the plan read from Kafka ("Applying the plan's assignments")
#   gateway  the gateway's HTTP port is open ("Gateway ... listening")
#   first200 infer on demo-a answers 200 (measured by this script, not read from the log)
#   planner  the planner's Streams group runs (it starts in the background; often after first200)
#   cpu      CPU seconds (user + system) the JVM used up to the first 200: unlike the seconds above,
#            a figure that hardly depends on how busy the machine is; the next line names the
#            threads that used most
#
# It never builds: it runs the jar your last build made, so build first (no `install`):
#   ./mvnw -B -o -q -pl launcher -am package -DskipTests
#   scripts/measure-restart.sh 3
# Settings (environment): PARTITA_JAR, PARTITA_JAVA_OPTS (default -Xmx2g, as ./partita),
# KAFKA_PORT (29092), HTTP_PORT (18080), DATA_DIR (a new temporary directory, removed at the end
# unless KEEP_DATA=1), PARTITA_CDS (1; 0 = no class-data-sharing archive), SETTLE_S (seconds to
# keep serving between restarts, 10), LIMIT_S (give up on one start after this many seconds, 300),
# extra `local` flags in LOCAL_ARGS.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RESTARTS="${1:-3}"
JAR="${PARTITA_JAR:-$ROOT/launcher/target/partita-launcher.jar}"
KAFKA_PORT="${KAFKA_PORT:-29092}"
HTTP_PORT="${HTTP_PORT:-18080}"
SETTLE_S="${SETTLE_S:-10}"
LIMIT_S="${LIMIT_S:-300}"
DATA_DIR="${DATA_DIR:-$(mktemp -d -t partita-restart.XXXXXX)}"
[ -f "$JAR" ] || { echo "no $JAR: build it first with ./mvnw -B -o -q -pl launcher -am package -DskipTests" >&2; exit 2; }
mkdir -p "$DATA_DIR"
BODY='{"inputs":[{"name":"input","datatype":"FP32","shape":[1,8],"data":[1,2,3,4,5,6,7,8]}]}'
PID=""

cleanup() {
  if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then kill -9 "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi
  if [ "${KEEP_DATA:-0}" != 1 ]; then rm -rf "$DATA_DIR"; else echo "data and logs kept in $DATA_DIR"; fi
}
trap cleanup EXIT

# Seconds since midnight, with milliseconds, of a HH:MM:SS.mmm (or longer fraction) time.
secs() { awk -F: '{ printf "%.3f", $1 * 3600 + $2 * 60 + $3 }' <<<"$1"; }

start() { # $1: log file
  # shellcheck disable=SC2086
  java ${PARTITA_JAVA_OPTS:--Xmx2g} $CDS_OPTS -jar "$JAR" local --data-dir "$DATA_DIR" --kafka-port "$KAFKA_PORT" \
    --http-port "$HTTP_PORT" --grpc-port -1 ${LOCAL_ARGS:-} >"$1" 2>&1 &
  PID=$!
}

# CPU seconds the JVM has used so far (user + system), and the threads that used most, grouped by
# name (digits dropped): a figure that, unlike the wall-clock time, does not depend on how busy the
# machine is.
cpu_used() {
  local tick; tick=$(getconf CLK_TCK)
  awk -v t="$tick" '{ sub(/^[^)]*\) /, ""); split($0, f, " "); printf "%.1f", (f[12] + f[13]) / t }' "/proc/$PID/stat"
}
cpu_threads() {
  local tick; tick=$(getconf CLK_TCK)
  for task in /proc/"$PID"/task/*; do
    name=$(tr -d '0-9' <"$task/comm" | tr ' ' '_'); stat=$(sed 's/^[^)]*) //' "$task/stat")
    echo "$name $(awk '{ print $12 + $13 }' <<<"$stat")"
  done 2>/dev/null | awk -v t="$tick" '{ c[$1] += $2 } END { for (n in c) if (c[n] / t >= 0.3) printf "%.1f %s\n", c[n] / t, n }' \
    | sort -rn | head -8 | awk '{ printf "%s %s s; ", $2, $1 }'
}

# Polls infer until it answers 200; prints the wall-clock time (HH:MM:SS.nnn) of that answer.
await_200() { # $1: log file
  local deadline=$((SECONDS + LIMIT_S)) code took
  : >"$1.calls"
  while [ $SECONDS -lt $deadline ]; do
    kill -0 "$PID" 2>/dev/null || { echo "partita local exited; see $1" >&2; tail -20 "$1" >&2; return 1; }
    read -r code took < <(curl -s -o /dev/null -w '%{http_code} %{time_total}\n' -m 10 \
      "localhost:$HTTP_PORT/v2/models/demo-a/infer" -H 'Content-Type: application/json' -d "$BODY" || true)
    # every answer but "connection refused" (000 in no time), with its time: what the gateway said
    # between opening its port and the first 200
    if [ "$code" != 000 ] || awk -v t="${took:-0}" 'BEGIN { exit !(t > 0.5) }'; then
      echo "$(date +%H:%M:%S.%N | cut -c1-12) $code ${took}s" >>"$1.calls"
    fi
    if [ "$code" = 200 ]; then date +%H:%M:%S.%N; return 0; fi
    sleep 0.1
  done
  echo "no 200 within ${LIMIT_S} s; see $1" >&2
  return 1
}

# Seconds from $1 (restart time) to the first log line of $2 matching the regex $3, or "-".
phase() {
  local line
  line=$(grep -m1 -E "$3" "$2" | grep -oE '^[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}' || true)
  if [ -z "$line" ]; then echo "-"; return; fi
  awk -v a="$(secs "$1")" -v b="$(secs "$line")" 'BEGIN { d = b - a; if (d < -43200) d += 86400; printf "%.1f", d }'
}

echo "partita restart measurement: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), data in $DATA_DIR"
CDS_OPTS=""
if [ "${PARTITA_CDS:-1}" = 1 ]; then
  # As ./partita local does: a first run that ends cleanly writes the class-data-sharing archive
  # that every later start maps (PARTITA_CDS=0 measures without it).
  archive="$DATA_DIR/partita-local.jsa"
  CDS_OPTS="-XX:ArchiveClassesAtExit=$archive -Xlog:cds=off -Xlog:cds+dynamic=off"
  start "$DATA_DIR/archive.log"
  await_200 "$DATA_DIR/archive.log" >/dev/null
  kill -TERM "$PID"; wait "$PID" 2>/dev/null || true
  [ -f "$archive" ] || { echo "no class-data-sharing archive was written; see $DATA_DIR/archive.log" >&2; exit 1; }
  echo "class-data-sharing archive: $(du -h "$archive" | cut -f1) written by a first run stopped with SIGTERM"
  CDS_OPTS="-XX:SharedArchiveFile=$archive -Xlog:cds=off -Xlog:cds+dynamic=off"
fi
start "$DATA_DIR/start-0.log"
t0=$(date +%H:%M:%S.%N)
t1=$(await_200 "$DATA_DIR/start-0.log")
echo "clean start: 200 after $(awk -v a="$(secs "$t0")" -v b="$(secs "$t1")" 'BEGIN { printf "%.1f", b - a }') s"
printf '%-8s %6s | %5s %6s %6s %6s %6s %7s %8s %7s | %5s %s\n' restart total log broker worker routes plan gateway first200 planner cpu load
totals=()
sleep "$SETTLE_S"
for i in $(seq 1 "$RESTARTS"); do
  kill -9 "$PID"; wait "$PID" 2>/dev/null || true
  log="$DATA_DIR/restart-$i.log"
  load=$(cut -d' ' -f1 /proc/loadavg)
  r=$(date +%H:%M:%S.%N)
  start "$log"
  f=$(await_200 "$log")
  cpu=$(cpu_used); threads=$(cpu_threads)
  total=$(awk -v a="$(secs "$r")" -v b="$(secs "$f")" 'BEGIN { d = b - a; if (d < 0) d += 86400; printf "%.1f", d }')
  totals+=("$total")
  sleep "$SETTLE_S" # keeps serving (and lets the planner's phase reach the log) before the next crash
  printf '%-8s %6s | %5s %6s %6s %6s %6s %7s %8s %7s | %5s %s\n' "#$i" "$total" \
    "$(phase "$r" "$log" '^[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3} ')" \
    "$(phase "$r" "$log" 'Embedded Kafka broker listening')" \
    "$(phase "$r" "$log" 'Inference worker .* runs')" \
    "$(phase "$r" "$log" 'Route table caught up')" \
    "$(phase "$r" "$log" "Applying the plan's assignments")" \
    "$(phase "$r" "$log" 'Gateway .* listening on')" \
    "$total" \
    "$(phase "$r" "$log" 'Planner .* running on')" "$cpu" "$load"
  echo "         CPU seconds by thread up to the first 200: $threads"
  echo "         answers before the first 200 (time, code, seconds taken): $(head -n -1 "$log.calls" | tr '\n' ';' | cut -c1-300)"
done
echo "seconds from restart to the first 200: ${totals[*]} (load average now $(cut -d' ' -f1-3 /proc/loadavg))"
