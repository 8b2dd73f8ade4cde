package grain

import (
	"crypto/sha256"

	"github.com/aditus-queue/aditus-queue/persistence/seal"
)

var sealer, _ = seal.NewSealer(make([]byte, seal.KeySize))

func hash(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }
