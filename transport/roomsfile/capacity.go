package roomsfile

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"regexp"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// A capacity room is declared in the proxies' HCL file; a rooms file sets
// only its runtime settings over that file's (`capacity_room "<host>"
// "<name>" { active = 800 }`), as the console does. A field the rooms file
// leaves out goes back to the proxies' file's value.

// CapacityRuntime is what an operator sets over the proxies' file; nil
// fields are the file's.
type CapacityRuntime struct {
	Active        *int                `json:"active,omitempty"`
	Paused        *bool               `json:"paused,omitempty"`
	Open          *bool               `json:"open,omitempty"`
	Pow           *CapacityPow        `json:"pow,omitempty"`
	AddressBudget *room.AddressBudget `json:"addressBudget,omitempty"`
}

// CapacityPow is the automatic proof of work of a capacity room.
type CapacityPow struct {
	PerMinute float64 `json:"perMinute"`
	Bits      int     `json:"bits"`
	MaxBits   int     `json:"maxBits"`
}

// RuntimeFields are CapacityRuntime's fields, as `reset` names them.
var RuntimeFields = []string{"active", "paused", "open", "pow", "addressBudget"}

// CapacityRoom is one `capacity_room "<host>" "<name>"` block.
type CapacityRoom struct {
	Host, Name string
	Runtime    CapacityRuntime
	Range      hcl.Range
}

// CapacityState is a capacity room as a node holds it.
type CapacityState struct {
	ID, Host, Name string
	// Version is the runtime's ETag ("3"): the If-Match of a change.
	Version string
	Runtime CapacityRuntime
}

func decodeCapacity(b *hclsyntax.Block) (CapacityRoom, error) {
	if len(b.Labels) != 2 {
		return CapacityRoom{}, atRange(b.TypeRange, "a capacity_room block takes two labels, the host and the room's name: capacity_room \"shop.example.com\" \"/\" { … }")
	}
	spans := map[string]hcl.Range{"": b.DefRange()}
	obj, err := decodeBody(b.Body, reflect.TypeFor[CapacityRuntime](), "", spans)
	if err != nil {
		return CapacityRoom{}, err
	}
	var rt CapacityRuntime
	if err := fromObject(obj, &rt); err != nil {
		return CapacityRoom{}, atRange(b.DefRange(), "%v", err)
	}
	if field, msg := rt.invalid(); field != "" {
		return CapacityRoom{}, atRange(spanOf(spans, field), "capacity room %s %s: %s: %s", b.Labels[0], b.Labels[1], HCLPath(field), msg)
	}
	return CapacityRoom{Host: b.Labels[0], Name: b.Labels[1], Runtime: rt, Range: b.DefRange()}, nil
}

// invalid names the first field out of the admin API's bounds.
func (rt CapacityRuntime) invalid() (string, string) {
	if rt.Active != nil && (*rt.Active < 1 || *rt.Active > 10_000_000) {
		return "active", "must be 1–10,000,000"
	}
	if p := rt.Pow; p != nil {
		if !(p.PerMinute >= 0 && p.PerMinute <= 1e9) {
			return "pow.perMinute", "must be 0–1,000,000,000"
		}
		if p.Bits < 0 || p.Bits > 24 || p.MaxBits < 0 || p.MaxBits > 24 {
			return "pow.bits", "bits and max_bits must be 0–24"
		}
	}
	if b := rt.AddressBudget; b != nil {
		if !(b.PerMinute >= 1 && b.PerMinute <= 6e6) {
			return "addressBudget.perMinute", "must be 1–6,000,000"
		}
		if b.Burst < 1 || b.Burst > 10_000_000 {
			return "addressBudget.burst", "must be 1–10,000,000"
		}
	}
	return "", ""
}

// Adjust is a plan's step that changes a capacity room's runtime settings.
const Adjust Action = "adjust"

// DiffCapacity compares the file's capacity rooms with the node's; a room
// the file names that no proxy node serves is an error.
func DiffCapacity(want []CapacityRoom, have []CapacityState) ([]Step, error) {
	var steps []Step
	for _, w := range want {
		i := -1
		for j, h := range have {
			if h.Host == w.Host && h.Name == w.Name {
				i = j
			}
		}
		if i < 0 {
			return nil, fmt.Errorf("%s:%d: capacity room %s %s: no proxy node serves it (capacity rooms are declared in the proxies' HCL file)", w.Range.Filename, w.Range.Start.Line, w.Host, w.Name)
		}
		cur := have[i]
		fields := compare(cur.Runtime, w.Runtime)
		if len(fields) == 0 {
			continue
		}
		rt := w.Runtime
		steps = append(steps, Step{Action: Adjust, Slug: w.Host + " " + w.Name, ID: cur.ID, Version: cur.Version,
			Capacity: &rt, Reset: resets(cur.Runtime, w.Runtime), Fields: fields})
	}
	return steps, nil
}

// resets names the fields the node holds and the file leaves out.
func resets(have, want CapacityRuntime) []string {
	h, w := flatten(have), flatten(want)
	var out []string
	for _, f := range RuntimeFields {
		if hasPrefix(h, f) && !hasPrefix(w, f) {
			out = append(out, f)
		}
	}
	return out
}

func hasPrefix(flat map[string]string, field string) bool {
	for k := range flat {
		if k == field || len(k) > len(field) && k[:len(field)+1] == field+"." {
			return true
		}
	}
	return false
}

var capacityID = regexp.MustCompile(`^c[0-9a-f]{20}$`)

const capacityPath = "/api/admin/queue/capacity"

// CapacityRooms reads every capacity room the proxy nodes serve, with its
// runtime settings and version.
func (c *Client) CapacityRooms(ctx context.Context) ([]CapacityState, error) {
	var list struct {
		Rooms []struct{ ID, Host, Name string } `json:"rooms"`
	}
	if _, err := c.Do(ctx, http.MethodGet, capacityPath, "", nil, &list); err != nil {
		return nil, err
	}
	var out []CapacityState
	for _, r := range list.Rooms {
		var st struct {
			Runtime CapacityRuntime `json:"runtime"`
		}
		h, err := c.Do(ctx, http.MethodGet, capacityPath+"/"+url.PathEscape(r.ID), "", nil, &st)
		if IsNotFound(err) {
			continue // listed, but no longer served
		}
		if err != nil {
			return nil, err
		}
		out = append(out, CapacityState{ID: r.ID, Host: r.Host, Name: r.Name, Version: h.Get("ETag"), Runtime: st.Runtime})
	}
	return out, nil
}

// Adjust writes capacity room id's runtime settings over version (its
// ETag as read): the fields rt sets, and the fields reset names back to
// the proxies' file's.
func (c *Client) Adjust(ctx context.Context, id, version string, rt CapacityRuntime, reset []string) error {
	body := map[string]any{}
	raw, _ := json.Marshal(rt) // a CapacityRuntime always encodes
	_ = json.Unmarshal(raw, &body)
	if len(reset) > 0 {
		body["reset"] = reset
	}
	_, err := c.Do(ctx, http.MethodPatch, capacityPath+"/"+url.PathEscape(id), version, body, nil)
	return err
}
