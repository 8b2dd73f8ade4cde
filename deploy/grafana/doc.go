// Package grafana holds the Grafana dashboard of the per-room gauges
// (aditus-queue-rooms.json, import it in Grafana with a Prometheus data
// source that scrapes every node's /metrics on its operations listener,
// --ops-addr, port 9090 in the manifests; the visitor port serves none)
// and the test that keeps its metric names in step with what a node
// exports there.
package grafana
