package live

import (
	"context"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/transport/ws"
)

// Capacity rooms on the live socket. The same socket serves a capacity
// room's id (protocol.CapacityID): its feed reads the capacity grain's state
// once a second (the gauges the grain keeps, the proxy nodes reporting it,
// the settings in force and the file's) and sends it whole as one
// CapacityFrame: the state is small and has no history to send in parts.
// Only the operator opens it: a room's key belongs to one rate room.

// CapacityFrame is what a capacity room's dashboard socket receives once a
// second.
type CapacityFrame struct {
	Type string `json:"type"`
	At   string `json:"at"`
	protocol.CapacityState
}

// capacityExists reports whether a proxy node has served capacity room id.
func (h *Hub) capacityExists(ctx context.Context, id string) error {
	st, err := h.client.CapacityState(ctx, id)
	switch {
	case err != nil:
		return errBusy
	case st.File.Active == 0:
		return errNoRoom
	}
	return nil
}

// pullCapacity sends the capacity room's state to every socket of f.
func (f *feed) pullCapacity() {
	ctx, cancel := context.WithTimeout(context.Background(), pullTimeout)
	st, err := f.h.client.CapacityState(ctx, f.id)
	cancel()
	if err != nil {
		f.h.log.Debug("dashboard capacity read failed", "room", f.id, "error", err)
		return
	}
	pm := ws.Prepare(CapacityFrame{Type: "capacity", At: f.h.now().UTC().Format(time.RFC3339Nano), CapacityState: st})
	if pm == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := range f.conns {
		f.conns[s] = true
		if !s.offer(pm) {
			go s.close(websocket.CloseTryAgainLater, "too slow")
		}
	}
}
