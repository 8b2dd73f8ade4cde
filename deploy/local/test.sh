#!/usr/bin/env bash
# test.sh — the whole test suite, as README.md gives it: unit and
# integration tests (go test, with -race on the packages with concurrency),
# the Kafka tests against a real broker started here, and the browser tests
# in headless Chromium. Installs what it needs that the machine lacks
# (Debian packages need root; the Kafka jars come from Maven Central, the
# browser driver from npm).
#
#   deploy/local/test.sh            everything
#   AQ_SKIP_BROWSER=1 …             without the browser tests
#   AQ_SKIP_KAFKA=1 …               without the Kafka tests
#   AQ_SKIP_FUZZ=1 …                without the short fuzz runs
#   AQ_SKIP_CHAOS=1 …               without the chaos soak (it needs Kafka too)
#   AQ_SKIP_EDGE=1 …                without the edge gates (deploy/edge/test.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
# shellcheck source=deploy/local/lib.sh
source deploy/local/lib.sh

need_pkgs=()
command -v jq >/dev/null || need_pkgs+=(jq)
command -v curl >/dev/null || need_pkgs+=(curl)
command -v mvn >/dev/null || need_pkgs+=(maven)
if [[ -z ${AQ_SKIP_BROWSER:-} ]]; then
	[[ -x /usr/bin/chromium ]] || need_pkgs+=(chromium)
	command -v node >/dev/null || need_pkgs+=(nodejs npm)
fi
command -v nginx >/dev/null || need_pkgs+=(nginx)
# wrk: bench floor --client wrk cross-checks the load client with it.
command -v wrk >/dev/null || need_pkgs+=(wrk)
# njs: the edge gate's browser test runs nginx with it.
[[ -f /usr/lib/nginx/modules/ngx_http_js_module.so ]] || need_pkgs+=(libnginx-mod-http-js)
# The partition test (deploy/local/clustertest) cuts a member off with iptables.
command -v iptables >/dev/null || need_pkgs+=(iptables)
install_missing ${need_pkgs[@]+"${need_pkgs[@]}"}

started_kafka=
trap stop_kafka EXIT

if [[ -z ${AQ_SKIP_KAFKA:-} ]]; then
	echo "== starting Kafka"
	export AQ_KAFKA_PORT=${AQ_KAFKA_PORT:-19092}
	# Expired segments go within a second, so the retention test sees the
	# broker drop them.
	export AQ_KAFKA_RETENTION_CHECK_MS=${AQ_KAFKA_RETENTION_CHECK_MS:-1000}
	start_kafka
fi

echo "== go vet"
go vet ./...
# go.mod names what the project imports directly; a change that adds or
# drops an import without tidying fails here, not in a reader's head.
echo "== go mod tidy"
go mod tidy -diff
# staticcheck, pinned: unused code, values never read, deprecated calls.
# An exception is written where it stands, with its reason
# (//lint:ignore CHECK reason).
echo "== staticcheck"
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
echo "== go test"
go test -count=1 -timeout 20m ./...
# The Kubernetes manifests against the API types, as written and as
# kustomize builds them, and the compose file against the Compose schema
# (compose-go's loader), in a module of its own so that k8s.io/api,
# kustomize and compose-go stay out of the server's dependencies.
echo "== deploy/k8s manifests, kustomize build and docker-compose.yml (deploy/k8s/check)"
(cd deploy/k8s/check && go mod tidy -diff && go vet ./... && go test -count=1 -timeout 5m ./...)
# The Terraform provider, in a module of its own: gofmt, vet, staticcheck,
# its schema test, and its acceptance tests with the OpenTofu CLI (built
# from its Go module source once, cached under ~/.cache/aditus-queue/tofu)
# against a real serve. `rooms plan/apply` is tested with go test above.
echo "== Terraform provider with OpenTofu (deploy/terraform)"
tofu=$(deploy/terraform/build-tofu.sh)
(cd deploy/terraform && unformatted=$(gofmt -l .) && { [[ -z $unformatted ]] || { echo "gofmt: $unformatted" >&2; exit 1; }; } &&
	go mod tidy -diff && go vet ./... && go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./... &&
	TF_ACC=1 AQ_TOFU=$tofu go test -count=1 -timeout 10m ./...)
if [[ -z ${AQ_SKIP_KAFKA:-} ]]; then
	# The fault tests stop and start brokers, so they run alone, after the
	# rest: a broker stopped under another package's test would fail it.
	echo "== Kafka fault tests"
	AQ_KAFKA_FAULT_TESTS=1 go test -count=1 -p 1 -timeout 15m \
		-run 'TestBrokerRestart|TestBrokerOutageDuringJoins' ./persistence/kafkalog ./deploy/local/clustertest
fi
# -race on the packages with concurrency of our own. Not on transport/api
# and the cluster tests: protoactor-go's cluster races with itself when
# several actor systems share one process (docs/architecture.md,
# "Dependencies", pitfall 5), which those tests do by design; their concurrency is exercised without -race.
echo "== go test -race"
go test -count=1 -race -timeout 20m ./actors/node/... ./actors/front/... ./actors/grain/... ./actors/membership/... ./actors/protocol/... ./actors/health/... ./actors/capacity/... ./transport/proxy/... ./transport/crawler/... ./transport/ws/... ./transport/returnurl/... \
	./transport/web/... ./persistence/... ./bench/...
# The live dashboard's hub and the instance reports (one node per test).
echo "== go test -race (dashboard)"
go test -count=1 -race -timeout 10m ./dashboard/...

if [[ -z ${AQ_SKIP_FUZZ:-} ]]; then
	# The seed corpora ran with go test above; this fuzzes every target
	# for about 10 s with generated inputs.
	echo "== fuzzing (deploy/local/fuzz.sh)"
	deploy/local/fuzz.sh
fi
if [[ -z ${AQ_SKIP_KAFKA:-} && -z ${AQ_SKIP_CHAOS:-} ]]; then
	# 60 s of joins and status polls through a front node while a random
	# member is killed every 10 s; alone, as it loads the machine.
	echo "== chaos soak (deploy/local/chaos.sh)"
	deploy/local/chaos.sh
fi

if [[ -z ${AQ_SKIP_BROWSER:-} ]]; then
	echo "== browser tests (headless Chromium)"
	bash transport/web/e2e/run.sh
fi
if [[ -z ${AQ_SKIP_EDGE:-} ]]; then
	echo "== edge gates (nginx, Caddy, Cloudflare Worker, CloudFront, Go, verify.ts, PyJWT)"
	deploy/edge/test.sh
fi
echo "== all tests passed"
