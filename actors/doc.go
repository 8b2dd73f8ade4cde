// Package actors holds the packages of the cluster, in three sides and
// what they share:
//
//   - protocol: what the front and the grains say to each other: grain
//     kinds, operation names, request and answer bodies, error codes;
//   - front: what every node runs to call grains: the client, the join
//     batcher and its breaker, the views cache, the lookups;
//   - grain: what a member runs: the room, capacity, load-test, directory
//     and registry grains, their journal, snapshots and restore;
//   - membership: what keeps a node in the cluster: the watches of the
//     members, of reach, partition, stalls and the log, and the witness;
//   - node: the assembly that starts them on one process.
//
// The rooms' rules (room, capacity, loadtest, …) are pure and belong to no
// side. The import rules between the sides are checked by this package's
// test (sides_test.go).
package actors
