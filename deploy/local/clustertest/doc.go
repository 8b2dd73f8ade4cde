// Package clustertest holds the process-level tests of a cluster: real
// aditus-queue binaries (three members and a front node, or fewer) on
// 127.0.0.1 over a real Kafka broker, killed, paused and restarted while
// visitors join. The tests need AQ_KAFKA_BROKERS (deploy/local/test.sh
// sets it) and skip without it; the broker-outage test runs a broker of its
// own and needs AQ_KAFKA_FAULT_TESTS=1.
package clustertest
