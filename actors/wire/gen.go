// Package wire holds the protobuf messages exchanged between cluster
// members. The generated code is committed, so a plain go build needs no
// protoc; regenerate with go generate after editing wire.proto, with protoc
// (Debian's protobuf-compiler) and protoc-gen-go at the version of
// google.golang.org/protobuf in go.mod:
//
//	go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
package wire

//go:generate protoc --go_out=. --go_opt=paths=source_relative wire.proto
