#!/usr/bin/env bash
# chaos.sh — the chaos soak: three members and a front node of aditus-queue
# over a Kafka broker of the soak's own (kafka.sh on a port and data
# directory of its own: one fault stops it), all on 127.0.0.1, an open-loop
# on-sale into one room through the front (2,000 joins/s plus 500 status
# polls/s, sent on schedule by bench/load's runner) for 60 s, and a fault
# every 4 s: mostly the room's host killed with SIGKILL and restarted 2 s
# later, once two members killed at once, once the broker stopped for 5 s.
# It fails if a number is answered twice, an admission token granted stops
# verifying or its ticket stops getting a token, or a status poll fails
# outside the fault windows, or if the history of its operations breaks the
# room's model (porcupine, chaos_history_test.go); it prints the fail-over
# time after the kills of the room's host (p50, max), the joins lost per
# fault, the latency outside the windows and the history's verdict and size. The test is TestChaosSoak in
# deploy/local/clustertest. Then TestRollUnderLoad restarts every member
# gracefully, one after the other, under 2,000 joins/s through the front
# (AQ_ROLL_JOIN_RATE): every join must be answered 200, no number twice; it
# prints the longest pause of a room.
#
#   deploy/local/chaos.sh
#   AQ_CHAOS_SECONDS=20 deploy/local/chaos.sh     shorter
#
# Environment: AQ_CHAOS_SECONDS (default 60), AQ_CHAOS_JOIN_RATE (2000),
# AQ_CHAOS_POLL_RATE (500); AQ_KAFKA_BROKERS names the broker the roll
# uses; without it, the broker of kafka.sh on AQ_KAFKA_PORT (default 9092),
# started here when none answers and stopped again at the end.
#
# Every process of the soak (the test and the nodes it starts) runs in one
# process group of its own, killed at the end whatever happens.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=deploy/local/lib.sh
source deploy/local/lib.sh

seconds=${AQ_CHAOS_SECONDS:-60}
started_kafka=
pgid=
cleanup() {
	if [[ -n $pgid ]] && kill -0 -- "-$pgid" 2>/dev/null; then
		kill -KILL -- "-$pgid" 2>/dev/null || true
	fi
	stop_kafka
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ -z ${AQ_KAFKA_BROKERS:-} ]]; then
	export AQ_KAFKA_PORT=${AQ_KAFKA_PORT:-9092}
	start_kafka
fi

# Bounded: the run, a minute to start and check, the roll (about 30 s) and
# the test's own timeout.
limit=$((seconds + 360))
AQ_CHAOS_SOAK=1 AQ_CHAOS_SECONDS=$seconds setsid go test -count=1 -v -timeout "${limit}s" \
	-run '^(TestChaosSoak|TestRollUnderLoad)$' ./deploy/local/clustertest >"${TMPDIR:-/tmp}/aq-chaos.$$.log" 2>&1 &
pgid=$!
rc=0
wait "$pgid" || rc=$?
log=${TMPDIR:-/tmp}/aq-chaos.$$.log
if ((rc != 0)); then
	cat "$log"
	rm -f "$log"
	echo "chaos.sh: the soak failed" >&2
	exit "$rc"
fi
grep -E '(chaos|roll)_test.go|^(--- |ok|PASS)' "$log" | sed -E 's/^ +(chaos|roll)_test.go:[0-9]+: /  /'
rm -f "$log"
