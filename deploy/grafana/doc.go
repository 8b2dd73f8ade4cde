// Package grafana holds the Grafana dashboard of the per-room gauges
// (aditus-queue-rooms.json, import it in Grafana with a Prometheus data
// source that scrapes every node's /metrics) and the test that keeps its
// metric names in step with what a node exports.
package grafana
