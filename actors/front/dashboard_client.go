package front

import (
	"context"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
)

// Stats reads room id's live dashboard figures and the samples newer than
// since (Unix seconds; 0 for the last 30 minutes).
func (c *Client) Stats(ctx context.Context, id string, since int64) (*protocol.StatsResult, error) {
	var r protocol.StatsResult
	if err := c.call(ctx, id, protocol.KindRoom, protocol.OpStats, protocol.StatsRequest{Since: since}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Report sends this node's self-report to the instance registry.
func (c *Client) Report(ctx context.Context, in protocol.Instance) error {
	return c.call(ctx, protocol.RegistryID, protocol.KindRegistry, protocol.OpReport, in, nil)
}

// Leave takes node id off the instance registry at once (a graceful stop).
func (c *Client) Leave(ctx context.Context, id string) error {
	return c.call(ctx, protocol.RegistryID, protocol.KindRegistry, protocol.OpLeave, protocol.Instance{ID: id}, nil)
}

// Instances lists the nodes that reported within InstanceTTL, by id.
func (c *Client) Instances(ctx context.Context) ([]protocol.Instance, error) {
	var out []protocol.Instance
	return out, c.call(ctx, protocol.RegistryID, protocol.KindRegistry, protocol.OpInstances, struct{}{}, &out)
}
