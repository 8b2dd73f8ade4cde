// Package wire holds the protobuf messages exchanged between cluster
// members. The generated code is committed, so a plain go build needs no
// protoc; regenerate with go generate after editing wire.proto.
package wire

//go:generate protoc --go_out=. --go_opt=paths=source_relative wire.proto
