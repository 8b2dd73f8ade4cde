#!/usr/bin/env bash
# wrk-rounds.sh CONNS ROUNDS DURATION NAME=PID=URL...
#
# Runs wrk (two threads) against each target in turn, ROUNDS times, the
# order reversed every other round so that a drift of the machine's load
# favours no target, and prints one line per run: round, name,
# connections, requests/s, p99, non-2xx answers, the server's CPU time per
# request (user+system of PID over the run, from /proc) and the machine's
# CPU pressure. A name containing "join" is sent as a POST. Used for the
# figures of bench/RESULTS.md; targets are loopback servers only.
set -euo pipefail
c=$1 rounds=$2 d=$3
shift 3
targets=("$@")
script=$(mktemp)
trap 'rm -f "$script"' EXIT
echo 'wrk.method = "POST"' >"$script"
tck=$(getconf CLK_TCK)
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
for r in $(seq 1 "$rounds"); do
	order=("${targets[@]}")
	if ((r % 2 == 0)); then
		order=()
		for ((i = ${#targets[@]} - 1; i >= 0; i--)); do order+=("${targets[i]}"); done
	fi
	for t in "${order[@]}"; do
		name=${t%%=*} rest=${t#*=}
		pid=${rest%%=*} url=${rest#*=}
		case $url in http://127.*|http://localhost*) ;; *) echo "not a loopback URL: $url" >&2; exit 2 ;; esac
		args=(-t2 -c"$c" -d"$d" --latency)
		[[ $name == *join* ]] && args+=(-s "$script")
		c0=$(cpu "$pid")
		out=$(wrk "${args[@]}" "$url")
		c1=$(cpu "$pid")
		rate=$(awk '/Requests\/sec/{print $2}' <<<"$out")
		n=$(awk '/requests in/{print $1}' <<<"$out")
		p99=$(awk '$1=="99%"{print $2}' <<<"$out")
		errs=$(awk '/Non-2xx/{print $5}' <<<"$out")
		us=$(awk -v a="$c0" -v b="$c1" -v n="$n" -v t="$tck" 'BEGIN{printf "%.1f", (b-a)/t*1e6/n}')
		echo "$r $name c=$c $rate $p99 ${errs:-0} ${us}us/req $(awk '/some/{print $2}' /proc/pressure/cpu)"
	done
done
