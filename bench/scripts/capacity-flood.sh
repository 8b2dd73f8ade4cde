#!/usr/bin/env bash
# capacity-flood.sh BINARY LABEL [SETTINGS]
#
# The flood of a capacity room as an attacker would send it: one
# `aditus-queue proxy` alone on a fresh embedded log, a room of 5 slots
# refreshing every 10 s, `wrk -t2 -c16 -d6s` without a cookie from
# 127.0.0.1; then one visitor from 127.0.0.2 who keeps the cookie: the
# place shown on the first request and on the return. Prints one line:
# the flood's requests/s, the log's growth (du -sb of the data directory)
# and the visitor's places. SETTINGS are more lines of the waiting_room
# block (an address_budget, a pow_auto). Used for the figures of
# bench/RESULTS.md; loopback only.
set -euo pipefail
bin=$1 label=$2 settings=${3:-}
d=$(mktemp -d)
trap 'kill $pid $upid 2>/dev/null; wait 2>/dev/null; rm -rf "$d"' EXIT
# below the ephemeral range (32768 up), which outgoing connections take
port=$((20000 + RANDOM % 12000)) up=$((port + 1))
python3 -m http.server "$up" --bind 127.0.0.1 --directory "$d" >/dev/null 2>&1 &
upid=$!
cat >"$d/shop.hcl" <<HCL
host "shop.test" {
  location "/" {
    upstream "127.0.0.1:$up" {}
    waiting_room {
      active         = 5
      on_store_error = "wait"
      refresh        = "10s"
      $settings
    }
  }
}
HCL
"$bin" proxy --config "$d/shop.hcl" --addr "127.0.0.1:$port" --data-dir "$d/data" >"$d/out.txt" 2>&1 &
pid=$!
for _ in $(seq 100); do curl -s -o /dev/null -H 'Host: shop.test' "http://127.0.0.1:$port/" && break; sleep 0.1; done
sleep 1
b0=$(du -sb "$d/data" | cut -f1)
wrk -t2 -c16 -d6s -H 'Host: shop.test' "http://127.0.0.1:$port/" >"$d/wrk.txt"
b1=$(du -sb "$d/data" | cut -f1)
place() { grep -o 'id="position">[^<]*\|data-bits="[0-9]*"' | sed 's/id="position">//; s/data-bits="\([0-9]*\)"/challenge of \1 bits/'; }
first=$(curl -s --interface 127.0.0.2 -c "$d/jar" -H 'Host: shop.test' "http://127.0.0.1:$port/" | place)
back=$(curl -s --interface 127.0.0.2 -b "$d/jar" -c "$d/jar" -H 'Host: shop.test' "http://127.0.0.1:$port/" | place)
echo "$label: $(grep -E 'Requests/sec' "$d/wrk.txt" | tr -s ' '), $(grep -E 'requests in' "$d/wrk.txt" | tr -s ' '), log +$((b1 - b0)) bytes, visitor first [$first] back [$back]"
