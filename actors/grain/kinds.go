// Package grain is what a member runs: the room, capacity, load-test,
// directory and registry grains, the journal that fences their streams
// and the write pipeline, snapshots, restore and the handling of damaged
// streams. It never calls the front's side (actors/sides_test.go).
package grain

import (
	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
)

// Kinds are the grains a member hosts, built on d.
func Kinds(d *Deps) []*cluster.Kind {
	return []*cluster.Kind{
		cluster.NewKind(protocol.KindRoom, actor.PropsFromProducer(func() actor.Actor { return newRoomGrain(d) })),
		cluster.NewKind(protocol.KindDirectory, actor.PropsFromProducer(func() actor.Actor { return newDirectoryGrain(d) })),
		cluster.NewKind(protocol.KindLoadTests, actor.PropsFromProducer(func() actor.Actor { return newLoadTestGrain(d) })),
		cluster.NewKind(protocol.KindCapacity, actor.PropsFromProducer(func() actor.Actor { return newCapacityGrain(d) })),
		cluster.NewKind(protocol.KindRegistry, actor.PropsFromProducer(func() actor.Actor { return newRegistryGrain(d) })),
		cluster.NewKind(protocol.KindCapacityIndex, actor.PropsFromProducer(func() actor.Actor { return newCapacityIndex(d) })),
	}
}
