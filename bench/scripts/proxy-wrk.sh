#!/usr/bin/env bash
# proxy-wrk.sh [CONNS] [ROUNDS] [DURATION]
#
# The capacity proxy against nginx, in one run: a bare net/http upstream
# (`aditus-queue bench floor-server`, a fixed body), then wrk (two
# threads, CONNS connections, default 64) against it directly, through
# nginx (proxy_pass with upstream keepalive, worker_processes auto), and
# through `aditus-queue proxy` with --upstream-client std and fast, each
# with an admitted visitor's cookie of a capacity room. ROUNDS (default 3)
# rounds of DURATION (default 8s), the order reversed every other round.
# Prints one line per run (round, name, requests/s, p99, non-2xx, the
# server's CPU time per request from /proc: user+system of its processes
# over the run) and the medians with the ratios to nginx. Everything listens on 127.0.0.1, on
# ports the kernel chose.
set -euo pipefail
c=${1:-64} rounds=${2:-3} d=${3:-8s}
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	[[ -f $tmp/nginx.pid ]] && kill "$(cat "$tmp/nginx.pid")" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
go build -o "$tmp/aq" .
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
waitfor() { # file pattern: prints the first match of pattern in file
	for _ in $(seq 1 200); do
		if m=$(grep -om1 "$2" "$1" 2>/dev/null); then echo "$m"; return; fi
		sleep 0.1
	done
	echo "no $2 in $1:" >&2; cat "$1" >&2; exit 1
}

# The upstream: ends when its standard input does.
mkfifo "$tmp/floor.in"
"$tmp/aq" bench floor-server --addr 127.0.0.1:0 <"$tmp/floor.in" >"$tmp/floor.out" 2>&1 &
pids+=($!)
exec 3>"$tmp/floor.in"
up=$(waitfor "$tmp/floor.out" 'http://127\.0\.0\.1:[0-9]*')
uphost=${up#http://}
path=/queue/bench/status

nport=$(freeport)
mkdir -p "$tmp/nginx"
cat >"$tmp/nginx.conf" <<CONF
worker_processes auto;
pid $tmp/nginx.pid;
error_log $tmp/nginx/error.log warn;
events { worker_connections 4096; }
http {
	access_log off;
	client_body_temp_path $tmp/nginx/body;
	proxy_temp_path $tmp/nginx/proxy;
	fastcgi_temp_path $tmp/nginx/fastcgi;
	uwsgi_temp_path $tmp/nginx/uwsgi;
	scgi_temp_path $tmp/nginx/scgi;
	upstream shop { server $uphost; keepalive 256; }
	server {
		listen 127.0.0.1:$nport;
		location / {
			proxy_pass http://shop;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
			proxy_set_header Host \$host;
			proxy_set_header X-Forwarded-For \$remote_addr;
		}
	}
}
CONF
nginx -p "$tmp/nginx" -e "$tmp/nginx/error.log" -c "$tmp/nginx.conf"
waitfor "$tmp/nginx.pid" '[0-9]*' >/dev/null
ngpid=$(cat "$tmp/nginx.pid")

cat >"$tmp/shop.hcl" <<CONF
host "shop.test" {
  location "/" {
    upstream "$uphost" {}
    waiting_room {
      active         = 1000
      on_store_error = "wait"
      session        = "1h"
    }
  }
}
CONF
startproxy() { # name client
	"$tmp/aq" proxy --config "$tmp/shop.hcl" --addr 127.0.0.1:0 --ops-addr 127.0.0.1:0 \
		--data-dir "$tmp/data-$1" --upstream-client "$2" --log-level warn >"$tmp/$1.out" 2>&1 &
	pids+=($!)
	eval "${1}pid=$!"
}
startproxy std std
startproxy fast fast
# The proxies log at warn: find their address from the socket table.
proxyaddr() {
	for _ in $(seq 1 300); do
		a=$(ss -Hltnp 2>/dev/null | awk -v p="pid=$1," '$0 ~ p {print $4}' | while read -r a; do
			if curl -s -o /dev/null -w '%{http_code}' -H 'Host: shop.test' "http://$a$path" | grep -q '^[25]0[03]$'; then echo "$a"; break; fi
		done)
		[[ -n $a ]] && { echo "$a"; return; }
		sleep 0.2
	done
	echo "proxy $1 never answered" >&2; exit 1
}
admit() { # addr: an admitted visitor's cookie
	for _ in $(seq 1 100); do
		h=$(curl -s -D - -o /dev/null -H 'Host: shop.test' "http://$1$path")
		if grep -q '^HTTP/1.1 200' <<<"$h"; then
			grep -i '^set-cookie: aq_' <<<"$h" | head -1 | sed 's/^[Ss]et-[Cc]ookie: //; s/;.*//'
			return
		fi
		sleep 0.2
	done
	echo "never admitted at $1" >&2; exit 1
}
stdaddr=$(proxyaddr "$stdpid") fastaddr=$(proxyaddr "$fastpid")
stdcookie=$(admit "$stdaddr") fastcookie=$(admit "$fastaddr")

tck=$(getconf CLK_TCK)
cpu() { # comma-separated pids: their user+system ticks
	local t=0
	for p in ${1//,/ }; do t=$((t + $(awk '{print $14+$15}' "/proc/$p/stat"))); done
	echo "$t"
}
targets=(
	"direct|$(pgrep -f "$tmp/aq bench floor-server" | head -1)|$up$path|"
	"nginx|$(pgrep -P "$ngpid" | paste -sd,)|http://127.0.0.1:$nport$path|"
	"proxy-std|$stdpid|http://$stdaddr$path|$stdcookie"
	"proxy-fast|$fastpid|http://$fastaddr$path|$fastcookie"
)
echo "# $(date -u +%FT%TZ) load average: $(cut -d' ' -f1-3 /proc/loadavg); wrk -t2 -c$c -d$d, $rounds rounds"
echo "# round name req/s p99 non-2xx cpu-us/req"
for r in $(seq 1 "$rounds"); do
	order=("${targets[@]}")
	if ((r % 2 == 0)); then
		order=()
		for ((i = ${#targets[@]} - 1; i >= 0; i--)); do order+=("${targets[i]}"); done
	fi
	for t in "${order[@]}"; do
		IFS='|' read -r name pid url cookie <<<"$t"
		args=(-t2 -c"$c" -d"$d" --latency -H 'Host: shop.test')
		[[ -n $cookie ]] && args+=(-H "Cookie: $cookie")
		c0=$(cpu "$pid")
		out=$(wrk "${args[@]}" "$url")
		c1=$(cpu "$pid")
		rate=$(awk '/Requests\/sec/{print $2}' <<<"$out")
		p99=$(awk '$1=="99%"{print $2}' <<<"$out")
		errs=$(awk '/Non-2xx/{print $5}' <<<"$out")
		n=$(awk '/requests in/{print $1}' <<<"$out")
		us=$(awk -v a="$c0" -v b="$c1" -v n="$n" -v t="$tck" 'BEGIN{printf "%.1f", (b-a)/t*1e6/n}')
		echo "$r $name $rate $p99 ${errs:-0} $us" | tee -a "$tmp/runs"
	done
done
echo "# medians; ratios to nginx"
awk '
function ms(s) { if (s ~ /us$/) return s/1000; if (s ~ /ms$/) return s+0; if (s ~ /s$/) return s*1000; return s }
function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t } return a[int((n + 1) / 2)] }
{ n[$2]++; rate[$2, n[$2]] = $3; p99[$2, n[$2]] = ms($4); errs[$2] += $5; us[$2, n[$2]] = $6 }
END {
	split("direct nginx proxy-std proxy-fast", names, " ")
	for (k = 1; k <= 4; k++) { m = names[k]; for (i = 1; i <= n[m]; i++) { a[i] = rate[m, i]; b[i] = p99[m, i]; u[i] = us[m, i] } R[m] = med(a, n[m]); P[m] = med(b, n[m]); U[m] = med(u, n[m]) }
	for (k = 1; k <= 4; k++) { m = names[k]; printf "%-10s %9.0f req/s  p99 %6.2f ms  x%.2f rate  x%.2f p99 of nginx  %5.1f us CPU/req  non-2xx %d\n", m, R[m], P[m], R[m] / R["nginx"], P[m] / P["nginx"], U[m], errs[m] }
}' "$tmp/runs"
