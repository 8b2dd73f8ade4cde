#!/usr/bin/env bash
# cluster.sh start|stop|status|restart NAME|roll|upgrade BINARY|add-front — a cluster of aditus-queue on this machine:
# three members and one front node on 127.0.0.1, sharing the Kafka broker that
# deploy/local/kafka.sh runs (started here when it is not running).
#
#   member1..3  --roles front,actor: each hosts room grains (placed by
#               consistent hashing) and answers the whole HTTP API, so any
#               member can be used directly and /queue/healthz answers on each.
#   front       --roles front: hosts no grains; answers status, info and
#               WebSocket from the views the grains push, and forwards joins,
#               tokens and admin calls to the member that owns the room.
#
# start prints one line per node, "<role> <http-url> <pid>" (role member or
# front), and returns once every node answers GET /queue/healthz. It is
# idempotent: nodes already running are left alone. stop sends SIGTERM and
# waits (rooms write their final checkpoints); it also stops the broker when
# start started it. status prints the same lines, with "stopped" for nodes that
# are not running, and exits 1 unless all are running.
#
# restart NAME (member1..3 or front) rebuilds the binary, stops the node
# gracefully (SIGTERM: a member hands its rooms over first) unless it is
# not running (killed, say), starts it again on its ports and waits for its
# healthz; it prints the node's line. roll restarts member1, member2 and
# member3 in turn, each once the one before answers healthz and the others
# have taken it in: a graceful roll loses no join. upgrade BINARY rolls
# the cluster to another binary (a release, or the previous one to go
# back: deploy/upgrade/build-previous.sh builds it) the same way, members
# first, then every front: a member of the new release serves the fronts
# of the old one, and a room writes a new event feature only once every
# node announces it (docs/architecture.md, "Upgrades"). add-front starts one
# more front node (front2 … front7, HTTP on P+4 … P+9, cluster remote
# P+14 … P+19), say while a load test runs; it prints its line, and status,
# stop and start include it from then on.
#
# Ports, with P = AQ_CLUSTER_PORT (default 8100):
#   HTTP            front P, members P+1..P+3
#   cluster remote  front P+10, members P+11..P+13
#   cluster health  members P+21..P+23 (the automanaged provider's peers)
#   operations      front P+30, members P+31..P+33 (/metrics, /queue/healthz,
#                   pprof; unless AQ_OPS_ADDR is set for every node)
#   added fronts    HTTP P+4..P+9, cluster remote P+14..P+19, operations
#                   P+34..P+39 (front2..front7)
#
# Environment:
#   AQ_CLUSTER_DIR   state: binary, pids, logs, data dirs, master key
#                    (default ~/.cache/aditus-queue/cluster)
#   AQ_CLUSTER_PORT  first port (default 8100)
#   AQ_KAFKA_PORT    the broker's port on 127.0.0.1 (default 9092); the other
#                    AQ_KAFKA_* variables of kafka.sh apply when it starts one
#   AQ_ADMIN_TOKEN   the operator's token; without it one is generated on the
#                    first start, printed once, and only its hash is kept
#   AQ_CLUSTER_START_TIMEOUT  seconds start waits for healthz (default 60)
# Every other AQ_* variable reaches the nodes as usual (environment twins of
# the serve flags), e.g. AQ_KAFKA_EVENTS_TOPIC, AQ_LOG_LEVEL.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
DIR=${AQ_CLUSTER_DIR:-$HOME/.cache/aditus-queue/cluster}
P=${AQ_CLUSTER_PORT:-8100}
KPORT=${AQ_KAFKA_PORT:-9092}
START_TIMEOUT=${AQ_CLUSTER_START_TIMEOUT:-60}
BIN=$DIR/bin/aditus-queue
NODES=(member1 member2 member3 front)
# Fronts added with add-front (front2 … front7), one name a line.
if [[ -s $DIR/fronts ]]; then
	mapfile -t extra <"$DIR/fronts"
	NODES+=("${extra[@]}")
fi
PEERS=127.0.0.1:$((P + 21)),127.0.0.1:$((P + 22)),127.0.0.1:$((P + 23))

# shellcheck source=deploy/local/lib.sh
source "$here/lib.sh"

# index prints the node's number: 0 for the front, 1..3 for members, 4..9
# for the fronts added (front2..front7).
index() {
	case $1 in
	front) echo 0 ;;
	front*) echo $((${1#front} + 2)) ;;
	member*) echo "${1#member}" ;;
	esac
}

role() { [[ $1 == front* ]] && echo front || echo member; }
url() { echo "http://127.0.0.1:$((P + $(index "$1")))"; }

# pid prints the node's pid when its pid file names a live aditus-queue
# serving this node's data directory (a recycled pid does not count).
pid() { live_pid "$DIR/$1.pid" "--data-dir $DIR/$1 "; }

# launched is true while the process just launched for node $1 lives. Right
# after launch the pid may still be the shell that is about to exec the
# binary, whose command line pid() does not recognise yet; on a loaded
# machine that moment lasts long enough to be mistaken for an exit.
launched() {
	local f=$DIR/$1.pid
	[[ -f $f ]] && kill -0 "$(<"$f")" 2>/dev/null
}

healthy() { curl -fsS -m 2 -o /dev/null "$(url "$1")/queue/healthz" 2>/dev/null; }

# secrets creates the cluster's master key once, and the admin token's hash
# in every node's data directory unless AQ_ADMIN_TOKEN is set.
secrets() {
	mkdir -p "$DIR"
	chmod 700 "$DIR"
	if [[ ! -s $DIR/master.key ]]; then
		(umask 077 && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$DIR/master.key.tmp")
		mv "$DIR/master.key.tmp" "$DIR/master.key"
	fi
	[[ -n ${AQ_ADMIN_TOKEN:-} ]] && return 0
	local n missing=
	for n in "${NODES[@]}"; do
		[[ -s $DIR/$n/admin-token.sha256 ]] || missing=1
	done
	[[ -z $missing ]] && return 0
	local tok hex k
	tok=aqa_$(head -c 24 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
	hex=$(printf %s "$tok" | sha256sum | cut -c1-64)
	for n in "${NODES[@]}"; do
		mkdir -p "$DIR/$n"
		chmod 700 "$DIR/$n"
		# The node reads the raw 32-byte SHA-256 of the token.
		(umask 077 && for ((k = 0; k < 64; k += 2)); do printf '%b' "\\x${hex:k:2}"; done >"$DIR/$n/admin-token.sha256")
	done
	printf '\nadmin token (shown once; only its hash is kept in %s/*/admin-token.sha256):\n\n    %s\n\n' "$DIR" "$tok"
}

launch() {
	local n=$1 i
	i=$(index "$n")
	local args=(serve --addr "127.0.0.1:$((P + i))" --public-url "$(url "$n")" --data-dir "$DIR/$n"
		--log kafka --kafka-brokers "127.0.0.1:$KPORT"
		--cluster-host 127.0.0.1 --cluster-port $((P + 10 + i)) --peers "$PEERS")
	[[ -n ${AQ_OPS_ADDR:-} ]] || args+=(--ops-addr "127.0.0.1:$((P + 30 + i))")
	if [[ $n == front* ]]; then
		args+=(--roles front)
	else
		args+=(--roles "front,actor" --cluster-health "127.0.0.1:$((P + 20 + i))")
	fi
	local port
	for port in $((P + i)) $((P + 10 + i)) $([[ -n ${AQ_OPS_ADDR:-} ]] || echo $((P + 30 + i))) $([[ $n == front* ]] || echo $((P + 20 + i))); do
		answers "$port" && die "127.0.0.1:$port (for $n) is already taken by another process"
	done
	mkdir -p "$DIR/$n"
	# setsid and closed descriptors: the node must not hold the caller's
	# terminal, process group or pipes.
	AQ_MASTER_KEY=$(<"$DIR/master.key") setsid "$BIN" "${args[@]}" </dev/null >>"$DIR/$n.log" 2>&1 8>&- &
	echo $! >"$DIR/$n.pid"
}

kafka() {
	answers "$KPORT" && return 0
	echo "cluster.sh: no Kafka broker on 127.0.0.1:$KPORT; starting one with kafka.sh"
	AQ_KAFKA_PORT=$KPORT "$here/kafka.sh" start 8>&-
	touch "$DIR/kafka.started"
}

start() {
	build
	secrets
	kafka
	local n started=()
	# Members first: the front needs a member to answer its first calls.
	for n in "${NODES[@]}"; do
		if ! pid "$n" >/dev/null; then
			launch "$n"
			started+=("$n")
		fi
	done
	local deadline=$((SECONDS + START_TIMEOUT)) waiting
	while :; do
		waiting=()
		for n in "${NODES[@]}"; do
			if ! launched "$n"; then
				echo "cluster.sh: $n exited during start; last lines of $DIR/$n.log:" >&2
				tail -n 20 "$DIR/$n.log" >&2 || true
				exit 1
			fi
			healthy "$n" || waiting+=("$n")
		done
		((${#waiting[@]} == 0)) && break
		if ((SECONDS >= deadline)); then
			die "${waiting[*]} did not answer /queue/healthz within ${START_TIMEOUT}s (logs in $DIR)"
		fi
		sleep 0.2
	done
	for n in "${NODES[@]}"; do
		echo "$(role "$n") $(url "$n") $(pid "$n")"
	done
}

stop() {
	local n p k pids=()
	# Fronts first, members last.
	for ((k = ${#NODES[@]} - 1; k >= 0; k--)); do
		n=${NODES[k]}
		if p=$(pid "$n"); then
			kill -TERM "$p"
			pids+=("$n:$p")
		else
			rm -f "$DIR/$n.pid"
		fi
	done
	local entry deadline=$((SECONDS + 30))
	for entry in "${pids[@]}"; do
		waitExit "${entry%%:*}" "${entry#*:}" "$deadline"
	done
	if [[ -f $DIR/kafka.started ]]; then
		AQ_KAFKA_PORT=$KPORT "$here/kafka.sh" stop 8>&-
		rm -f "$DIR/kafka.started"
	fi
}

# waitExit waits for node $1 (pid $2), sent SIGTERM, to exit; SIGKILL once
# SECONDS reaches $3.
waitExit() {
	local n=$1 p=$2 deadline=$3
	wait_exit "$n" "$p" "$deadline" 30
	rm -f "$DIR/$n.pid"
	echo "cluster.sh: stopped $n (pid $p)"
}

# stopNode stops node $1 gracefully, if it runs.
stopNode() {
	local n=$1 p
	if ! p=$(pid "$n"); then
		rm -f "$DIR/$n.pid"
		return 0
	fi
	kill -TERM "$p"
	waitExit "$n" "$p" $((SECONDS + 30))
}

# waitHealthy waits for node $1's healthz, failing if it exits.
waitHealthy() {
	local n=$1 deadline=$((SECONDS + START_TIMEOUT))
	until healthy "$n"; do
		if ! launched "$n"; then
			echo "cluster.sh: $n exited during start; last lines of $DIR/$n.log:" >&2
			tail -n 20 "$DIR/$n.log" >&2 || true
			exit 1
		fi
		((SECONDS < deadline)) || die "$n did not answer /queue/healthz within ${START_TIMEOUT}s (log in $DIR/$n.log)"
		sleep 0.2
	done
}

build() {
	command -v go >/dev/null || die "go not found (Go 1.26 is needed to build the binary)"
	command -v curl >/dev/null || die "curl not found (apt-get install curl)"
	mkdir -p "$DIR/bin"
	# The commit, for `version` and the instances list, also where the
	# build has no VCS stamp (GOFLAGS=-buildvcs=false).
	local commit
	commit=$(git -C "$root" rev-parse HEAD 2>/dev/null) || commit=
	(cd "$root" && go build -ldflags "-X github.com/aditus-queue/aditus-queue/actors/release.Commit=$commit" -o "$BIN.tmp" .) || die "go build failed"
	mv "$BIN.tmp" "$BIN"
}

restartNode() {
	local n=$1
	stopNode "$n"
	launch "$n"
	waitHealthy "$n"
	echo "$(role "$n") $(url "$n") $(pid "$n")"
}

restart() {
	local n=${1:-}
	[[ " ${NODES[*]} " == *" $n "* ]] || die "restart: name one of ${NODES[*]}"
	[[ -s $DIR/master.key ]] || die "restart: no cluster in $DIR (start it first)"
	build
	restartNode "$n"
}

roll() {
	[[ -s $DIR/master.key ]] || die "roll: no cluster in $DIR (start it first)"
	build
	local n
	for n in member1 member2 member3; do
		restartNode "$n"
		# The others and the front take it in within a round of health
		# checks (one second) before the next member leaves.
		sleep 2
	done
}

# upgrade rolls every node to the binary $1: the members one after the
# other, then the fronts, each once the one before answers healthz.
upgrade() {
	local bin=${1:-} n
	[[ -n $bin && -x $bin ]] || die "upgrade: name an aditus-queue binary (upgrade BINARY)"
	[[ -s $DIR/master.key ]] || die "upgrade: no cluster in $DIR (start it first)"
	local from to
	from=$("$BIN" version 2>/dev/null) || from="(unknown)"
	to=$("$bin" version 2>/dev/null) || die "upgrade: $bin does not run (aditus-queue version failed)"
	echo "cluster.sh: upgrade from ${from%%$'\n'*} to ${to%%$'\n'*}" >&2
	mkdir -p "$DIR/bin"
	cp "$bin" "$BIN.tmp"
	mv "$BIN.tmp" "$BIN"
	for n in "${NODES[@]}"; do
		[[ $n == member* ]] || continue
		restartNode "$n"
		sleep 2
	done
	for n in "${NODES[@]}"; do
		[[ $n == front* ]] || continue
		restartNode "$n"
	done
}

# addFront starts one more front node (front2 … front7) while the cluster
# runs, and remembers it for status, stop and start.
addFront() {
	[[ -s $DIR/master.key && -x $BIN ]] || die "add-front: no cluster in $DIR (start it first)"
	local k n=
	for k in 2 3 4 5 6 7; do
		if [[ " ${NODES[*]} " != *" front$k "* ]]; then
			n=front$k
			break
		fi
	done
	[[ -n $n ]] || die "add-front: front2 … front7 are all there"
	if [[ -z ${AQ_ADMIN_TOKEN:-} ]]; then
		mkdir -p "$DIR/$n"
		chmod 700 "$DIR/$n"
		cp "$DIR/member1/admin-token.sha256" "$DIR/$n/admin-token.sha256"
	fi
	echo "$n" >>"$DIR/fronts"
	NODES+=("$n")
	launch "$n"
	waitHealthy "$n"
	echo "$(role "$n") $(url "$n") $(pid "$n")"
}

status() {
	local n p all=0
	for n in "${NODES[@]}"; do
		if p=$(pid "$n"); then
			echo "$(role "$n") $(url "$n") $p"
		else
			echo "$(role "$n") $(url "$n") stopped"
			all=1
		fi
	done
	return $all
}

# One start or stop at a time per state directory.
locked() { locked_by 8 "$DIR/.lock" "$@"; }

case ${1:-} in
start) locked start ;;
stop) locked stop ;;
status) status ;;
restart) locked restart "${2:-}" ;;
roll) locked roll ;;
upgrade) locked upgrade "${2:-}" ;;
add-front) locked addFront ;;
*)
	echo "usage: $0 start|stop|status|restart NAME|roll|upgrade BINARY|add-front" >&2
	exit 2
	;;
esac
