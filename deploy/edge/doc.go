// Package edge holds the tests of the edge gates in deploy/edge: the same
// table runs against every gate in its real runtime on loopback (nginx with
// njs, Caddy built with xcaddy, the Cloudflare Worker under workerd, the
// CloudFront handler under Node, transport/gate), with tokens minted by
// actors/token, behind an upstream that records every request it sees.
//
// The runtime tests run when AQ_EDGE_TESTS=1, which deploy/edge/test.sh
// sets after installing what they need; plain go test runs the Go gate's
// table and skips the others with a message.
package edge
