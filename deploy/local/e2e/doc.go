// Package e2e holds the end-to-end tests of the aditus-queue binary: they
// build the command once (into a temporary directory) and run it as a user
// would, `serve`, `proxy`, `backup`/`restore`, `draw verify` and `bench
// proxy`, over HTTP on 127.0.0.1; TestOpenAPI checks every answer of the
// binary against the API document. The tests run from the repository's
// root, so that they read README.md (its tour, its table of bounds) and the
// test data where the documentation names them. The Kafka variants need
// AQ_KAFKA_BROKERS (deploy/local/test.sh sets it) and skip without it.
package e2e
