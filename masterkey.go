package main

import (
	"fmt"

	"github.com/aditus-queue/aditus-queue/persistence/seal"
)

// openSealer builds the sealer of stored secrets from the master key:
// --master-key when given, else the key file in the data directory
// (created on first start). Every error reads "master key: …".
func openSealer(c *serveConfig) (*seal.Sealer, error) {
	var key []byte
	var err error
	if c.MasterKey != "" {
		key, err = seal.ParseKey(c.MasterKey)
	} else {
		key, err = seal.LoadOrCreateKey(c.DataDir)
	}
	if err != nil {
		return nil, fmt.Errorf("master key: %w", err)
	}
	sealer, err := seal.NewSealer(key)
	if err != nil {
		return nil, fmt.Errorf("master key: %w", err)
	}
	return sealer, nil
}
