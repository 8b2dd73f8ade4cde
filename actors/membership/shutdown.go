package membership

import "github.com/asynkron/protoactor-go/cluster"

// Shutdown leaves the cluster. A member hands its grains over
// (graceful) or drops them. A client (a front node) has nothing to hand
// over, and protoactor's Cluster.Shutdown cannot stop one: it first tells
// the gossip that the node left, through a gossiper that only StartMember
// sets up, and dereferences its nil throttler (a panic on every SIGTERM of
// a front node). A client stops the parts StartClient started instead.
func Shutdown(c *cluster.Cluster, member, graceful bool) {
	if member {
		c.Shutdown(graceful)
		return
	}
	_ = c.Config.ClusterProvider.Shutdown(graceful)
	c.IdentityLookup.Shutdown()
	c.ActorSystem.Shutdown()
}
