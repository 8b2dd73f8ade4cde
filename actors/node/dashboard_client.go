package node

import "context"

// Stats reads room id's live dashboard figures and the samples newer than
// since (Unix seconds; 0 for the last 30 minutes).
func (c *Client) Stats(ctx context.Context, id string, since int64) (*StatsResult, error) {
	var r StatsResult
	if err := c.call(ctx, id, KindRoom, opStats, StatsRequest{Since: since}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Report sends this node's self-report to the instance registry.
func (c *Client) Report(ctx context.Context, in Instance) error {
	return c.call(ctx, RegistryID, KindRegistry, opReport, in, nil)
}

// Leave takes node id off the instance registry at once (a graceful stop).
func (c *Client) Leave(ctx context.Context, id string) error {
	return c.call(ctx, RegistryID, KindRegistry, opLeave, Instance{ID: id}, nil)
}

// Instances lists the nodes that reported within InstanceTTL, by id.
func (c *Client) Instances(ctx context.Context) ([]Instance, error) {
	var out []Instance
	return out, c.call(ctx, RegistryID, KindRegistry, opInstances, struct{}{}, &out)
}

// ID is this node's cluster member id, unique per process start.
func (n *Node) ID() string { return n.system.ID }

// IsMember reports whether this node hosts grains (role actor).
func (n *Node) IsMember() bool { return n.cfg.Member }
