package roomsfile

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// Site is a room as a node holds it.
type Site struct {
	ID string
	// Version is the room's ETag (its updatedAt, quoted): the If-Match of
	// a write prepared from this reading.
	Version string
	Config  room.Config
}

// Action is what a plan does to one room.
type Action string

// The actions of a plan.
const (
	Create Action = "create"
	Change Action = "change"
	Delete Action = "delete"
	// Keep is a room the node holds and the file does not name, left
	// alone because deleting needs -destroy.
	Keep Action = "keep"
)

// Step is one room's part of a plan.
type Step struct {
	Action Action `json:"action"`
	Slug   string `json:"slug"`
	// ID and Version are the room as read (change, delete, keep).
	ID      string `json:"id,omitempty"`
	Version string `json:"version,omitempty"`
	// Config is the configuration to write (create, change).
	Config *room.Config `json:"config,omitempty"`
	// Fields are the differences, field by field.
	Fields []FieldChange `json:"fields,omitempty"`
	// Capacity and Reset are a capacity room's runtime settings to write
	// and the fields that go back to the proxies' file (adjust).
	Capacity *CapacityRuntime `json:"capacity,omitempty"`
	Reset    []string         `json:"reset,omitempty"`
}

// FieldChange is one field's value before and after, as JSON; "" is
// absent.
type FieldChange struct {
	Path string `json:"path"`
	Old  string `json:"old,omitempty"`
	New  string `json:"new,omitempty"`
}

// Plan is what apply will do, room by room: the file's rooms in its order,
// then the node's other rooms by slug.
type Plan struct {
	Steps []Step `json:"steps"`
}

// Diff compares the rooms of a file with a node's rooms. It is a pure
// function: what it returns depends on its arguments alone.
func Diff(want []Room, have []Site, destroy bool) Plan {
	bySlug := make(map[string]Site, len(have))
	for _, s := range have {
		bySlug[s.Config.Slug] = s
	}
	var p Plan
	named := map[string]bool{}
	for _, r := range want {
		named[r.Slug] = true
		cfg := r.Config
		cur, exists := bySlug[r.Slug]
		if !exists {
			base := Normal(room.Config{Slug: r.Slug, Active: true})
			p.Steps = append(p.Steps, Step{Action: Create, Slug: r.Slug, Config: &cfg, Fields: compare(base, cfg)})
			continue
		}
		fields := compare(Normal(cur.Config), cfg)
		if len(fields) > 0 {
			p.Steps = append(p.Steps, Step{Action: Change, Slug: r.Slug, ID: cur.ID, Version: cur.Version, Config: &cfg, Fields: fields})
		}
	}
	var rest []Site
	for _, s := range have {
		if !named[s.Config.Slug] {
			rest = append(rest, s)
		}
	}
	sort.Slice(rest, func(i, j int) bool { return rest[i].Config.Slug < rest[j].Config.Slug })
	for _, s := range rest {
		a := Keep
		if destroy {
			a = Delete
		}
		p.Steps = append(p.Steps, Step{Action: a, Slug: s.Config.Slug, ID: s.ID, Version: s.Version})
	}
	return p
}

// Count is how many steps of the plan take action a.
func (p Plan) Count(a Action) int {
	n := 0
	for _, s := range p.Steps {
		if s.Action == a {
			n++
		}
	}
	return n
}

// Changes reports whether applying the plan would write anything.
func (p Plan) Changes() bool {
	return p.Count(Create)+p.Count(Change)+p.Count(Delete)+p.Count(Adjust) > 0
}

// compare lists the fields whose values differ between two
// configurations, by path, in order.
func compare(old, new any) []FieldChange {
	a, b := flatten(old), flatten(new)
	paths := make([]string, 0, len(a)+len(b))
	for k := range a {
		paths = append(paths, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			paths = append(paths, k)
		}
	}
	sort.Strings(paths)
	var out []FieldChange
	for _, k := range paths {
		if a[k] != b[k] {
			out = append(out, FieldChange{Path: k, Old: a[k], New: b[k]})
		}
	}
	return out
}

// flatten is a configuration's JSON as leaf paths (pow.bits,
// autoRate.rules[0].op) and their values; a list of plain values is one
// leaf.
func flatten(cfg any) map[string]string {
	raw, _ := json.Marshal(cfg) // configurations always encode
	var v any
	_ = json.Unmarshal(raw, &v)
	out := map[string]string{}
	walk("", v, out)
	delete(out, "slug") // fixed at creation, the block's label
	return out
}

func walk(path string, v any, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			return
		}
		for k, e := range x {
			walk(join(path, k), e, out)
		}
		return
	case []any:
		if len(x) == 0 {
			return // an empty list is no list: absent on both sides alike
		}
		if _, objects := x[0].(map[string]any); objects {
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", path, i), e, out)
			}
			return
		}
	case nil:
		return
	}
	out[path] = encode(v)
}

// encode is v as JSON, with <, > and & as they are.
func encode(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // decoded JSON always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// maxShown bounds a value in a plan's text: long messages are cut.
const maxShown = 80

func shown(v string) string {
	if v == "" {
		return "(none)"
	}
	if r := []rune(v); len(r) > maxShown {
		return string(r[:maxShown]) + "…"
	}
	return v
}

// Write prints the plan for people, field by field, with the file's names.
func (p Plan) Write(w io.Writer) {
	for _, s := range p.Steps {
		switch s.Action {
		case Create:
			fmt.Fprintf(w, "+ room %q will be created\n", s.Slug)
		case Change:
			fmt.Fprintf(w, "~ room %q (%s) will be changed\n", s.Slug, s.ID)
		case Delete:
			fmt.Fprintf(w, "- room %q (%s) will be deleted\n", s.Slug, s.ID)
		case Keep:
			fmt.Fprintf(w, "  room %q (%s) is not in the file, kept (-destroy deletes it)\n", s.Slug, s.ID)
		case Adjust:
			fmt.Fprintf(w, "~ capacity room %s (%s) will be adjusted; (none) is the proxies' file's value\n", s.Slug, s.ID)
		}
		for _, f := range s.Fields {
			if s.Action == Create {
				fmt.Fprintf(w, "    %s = %s\n", HCLPath(f.Path), shown(f.New))
			} else {
				fmt.Fprintf(w, "    %s: %s -> %s\n", HCLPath(f.Path), shown(f.Old), shown(f.New))
			}
		}
	}
	if !p.Changes() {
		fmt.Fprintf(w, "No changes: the node matches the file.")
	} else {
		fmt.Fprintf(w, "Plan: %d to create, %d to change, %d to delete.", p.Count(Create), p.Count(Change), p.Count(Delete))
		if n := p.Count(Adjust); n > 0 {
			fmt.Fprintf(w, " %d capacity rooms to adjust.", n)
		}
	}
	if n := p.Count(Keep); n > 0 {
		fmt.Fprintf(w, " %d not in the file, kept.", n)
	}
	fmt.Fprintln(w)
}

// fromObject decodes a JSON object into out, refusing unknown fields.
func fromObject(obj map[string]any, out any) error {
	raw, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	return dec.Decode(out)
}

// Check refuses a saved plan that could not have come from Diff: a step
// without the room it acts on, or a configuration the node would refuse.
func (p Plan) Check() error {
	for i, s := range p.Steps {
		if s.Action == Adjust {
			if err := checkAdjust(s); err != nil {
				return fmt.Errorf("step %d (capacity room %s): %w", i, s.Slug, err)
			}
			continue
		}
		if err := room.ValidateSlug(s.Slug); err != nil {
			return fmt.Errorf("step %d: %w", i, err)
		}
		switch s.Action {
		case Create, Change:
			if s.Config == nil || s.Config.Slug != s.Slug {
				return fmt.Errorf("step %d (room %q): no configuration for the room", i, s.Slug)
			}
			if err := s.Config.Validate(); err != nil {
				return fmt.Errorf("step %d (room %q): %w", i, s.Slug, err)
			}
		case Delete, Keep:
		default:
			return fmt.Errorf("step %d: unknown action %q", i, s.Action)
		}
		if s.Action != Create && (s.ID == "" || s.Version == "") {
			return fmt.Errorf("step %d (room %q): no id or version", i, s.Slug)
		}
	}
	return nil
}

func checkAdjust(s Step) error {
	if !capacityID.MatchString(s.ID) || s.Version == "" || s.Capacity == nil {
		return fmt.Errorf("no room id, version or settings")
	}
	if field, msg := s.Capacity.invalid(); field != "" {
		return fmt.Errorf("%s: %s", field, msg)
	}
	for _, r := range s.Reset {
		if !slices.Contains(RuntimeFields, r) {
			return fmt.Errorf("cannot reset %q", r)
		}
	}
	return nil
}
