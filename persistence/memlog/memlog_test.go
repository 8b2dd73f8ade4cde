package memlog

import (
	"testing"

	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/logtest"
)

func TestConformance(t *testing.T) {
	logtest.Run(t, func(t *testing.T) persistence.Log { return New() }, nil)
}

func TestRetentionConformance(t *testing.T) {
	logtest.RunRetention(t, func(t *testing.T) persistence.Log { return New() },
		logtest.Retention{KeepsUncovered: true, Expire: func(t *testing.T, l persistence.Log) { l.(*Log).Expire() }})
}
