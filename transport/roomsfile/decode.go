// Package roomsfile is rooms as code: a file of rooms in HCL (`room
// "<slug>" { … }`), the difference between it and what a node holds, and
// the admin API calls that make the node match it (`aditus-queue rooms
// plan` and `rooms apply`).
//
// The file's fields are the admin API's configuration (room.Config) with
// their names in snake_case: `ratePerMinute` is `rate_per_minute`, an
// object such as `pow` is a block, a list of objects (`autoRate.rules`,
// `events`) is one block per element named in the singular (`rule`,
// `event`). The file is an expression of values only: no variables, no
// functions, so reading it cannot touch the disk or the environment.
package roomsfile

import (
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// MaxFileBytes bounds a rooms file: a few hundred rooms fit well within it.
const MaxFileBytes = 1 << 20

// MaxRooms bounds the rooms one file may declare.
const MaxRooms = 1000

// Room is one `room "<slug>"` block: its configuration normalised as the
// server normalises it, and where it was written.
type Room struct {
	Slug   string
	Config room.Config
	Range  hcl.Range
}

// File is a rooms file: rate rooms, and capacity rooms' runtime settings.
type File struct {
	Rooms    []Room
	Capacity []CapacityRoom
}

// LoadFile reads and checks a rooms file. Every problem is an error naming
// the file and line; nothing is sent anywhere before the whole file holds.
func LoadFile(path string) (File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return File{}, err
	}
	if fi.Size() > MaxFileBytes {
		return File{}, fmt.Errorf("%s: %d bytes, more than the %d a rooms file may have", path, fi.Size(), MaxFileBytes)
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return File{}, err
	}
	return ParseFile(src, path)
}

// Parse reads the rate rooms of HCL source; filename names it in errors.
func Parse(src []byte, filename string) ([]Room, error) {
	f, err := ParseFile(src, filename)
	return f.Rooms, err
}

// ParseFile reads a rooms file from HCL source; filename names it in
// errors.
func ParseFile(src []byte, filename string) (File, error) {
	if len(src) > MaxFileBytes {
		return File{}, fmt.Errorf("%s: more than the %d bytes a rooms file may have", filename, MaxFileBytes)
	}
	f, diags := hclsyntax.ParseConfig(src, filename, hcl.Pos{Line: 1, Column: 1})
	if diags.HasErrors() {
		return File{}, diagError(diags)
	}
	body := f.Body.(*hclsyntax.Body)
	for _, a := range sortedAttrs(body) {
		return File{}, atRange(a.NameRange, "%q: only room blocks belong at the top of a rooms file", a.Name)
	}
	var out File
	seen := map[string]hcl.Range{}
	for _, b := range body.Blocks {
		if b.Type == "capacity_room" {
			if err := out.addCapacity(b, seen); err != nil {
				return File{}, err
			}
			continue
		}
		if b.Type != "room" {
			return File{}, atRange(b.TypeRange, "unknown block %q: a rooms file holds room \"<slug>\" { … } and capacity_room \"<host>\" \"<name>\" { … } blocks", b.Type)
		}
		if err := out.addRoom(b, seen); err != nil {
			return File{}, err
		}
	}
	return out, nil
}

// addRoom reads one room block into f.
func (f *File) addRoom(b *hclsyntax.Block, seen map[string]hcl.Range) error {
	if len(b.Labels) != 1 {
		return atRange(b.TypeRange, "a room block takes one label, its slug: room \"summer-sale\" { … }")
	}
	slug := b.Labels[0]
	if prev, dup := seen[slug]; dup {
		return atRange(b.LabelRanges[0], "room %q is declared twice (first at line %d)", slug, prev.Start.Line)
	}
	seen[slug] = b.DefRange()
	if len(f.Rooms)+len(f.Capacity) == MaxRooms {
		return atRange(b.DefRange(), "more than %d rooms in one file", MaxRooms)
	}
	r, err := decodeRoom(b)
	if err != nil {
		return err
	}
	f.Rooms = append(f.Rooms, r)
	return nil
}

// addCapacity reads one capacity_room block into f.
func (f *File) addCapacity(b *hclsyntax.Block, seen map[string]hcl.Range) error {
	r, err := decodeCapacity(b)
	if err != nil {
		return err
	}
	key := "capacity " + r.Host + " " + r.Name
	if prev, dup := seen[key]; dup {
		return atRange(b.DefRange(), "capacity room %s %s is declared twice (first at line %d)", r.Host, r.Name, prev.Start.Line)
	}
	seen[key] = b.DefRange()
	if len(f.Rooms)+len(f.Capacity) == MaxRooms {
		return atRange(b.DefRange(), "more than %d rooms in one file", MaxRooms)
	}
	f.Capacity = append(f.Capacity, r)
	return nil
}

// decodeRoom turns one room block into a checked configuration.
func decodeRoom(b *hclsyntax.Block) (Room, error) {
	spans := map[string]hcl.Range{"": b.DefRange()}
	obj, err := decodeBody(b.Body, reflect.TypeFor[room.Config](), "", spans)
	if err != nil {
		return Room{}, err
	}
	obj["slug"] = b.Labels[0]
	if _, set := obj["active"]; !set {
		obj["active"] = true // as the console creates a room: open
	}
	var cfg room.Config
	if err := fromObject(obj, &cfg); err != nil {
		return Room{}, atRange(b.DefRange(), "%v", err)
	}
	cfg = Normal(cfg)
	if err := cfg.Validate(); err != nil {
		return Room{}, fieldError(err, spans, b.Labels[0])
	}
	return Room{Slug: b.Labels[0], Config: cfg, Range: b.DefRange()}, nil
}

// Normal is cfg as the server stores and shows it: defaults filled in,
// times in UTC. Both sides of a comparison go through it.
func Normal(cfg room.Config) room.Config {
	cfg.Normalize()
	cfg.AddressBudget = cfg.AddressBudget.Effective()
	if cfg.OpensAt != nil {
		t := cfg.OpensAt.UTC()
		cfg.OpensAt = &t
	}
	for i := range cfg.Events {
		e := &cfg.Events[i]
		e.StartsAt, e.EndsAt = e.StartsAt.UTC(), e.EndsAt.UTC()
		if e.PrequeueFrom != nil {
			t := e.PrequeueFrom.UTC()
			e.PrequeueFrom = &t
		}
	}
	return cfg
}

// fieldError places a validation error at the field's line, or its
// nearest enclosing block's.
func fieldError(err error, spans map[string]hcl.Range, slug string) error {
	fe, ok := err.(*room.FieldError)
	if !ok {
		return fmt.Errorf("room %q: %w", slug, err)
	}
	return atRange(spanOf(spans, fe.Field), "room %q: %s: %s", slug, HCLPath(fe.Field), fe.Message)
}

// spanOf is where field p was written, or its nearest enclosing block.
func spanOf(spans map[string]hcl.Range, p string) hcl.Range {
	for {
		if r, ok := spans[p]; ok {
			return r
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			return spans[""]
		}
		p = p[:i]
	}
}

var timeType = reflect.TypeFor[time.Time]()

// field is one configuration field as the file names it.
type field struct {
	json  string
	typ   reflect.Type // pointers removed
	block bool         // a struct, or a list of structs
	list  bool         // a list of blocks
}

// fieldsOf lists t's fields by their names in the file.
func fieldsOf(t reflect.Type) map[string]field {
	out := map[string]field{}
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "" || name == "-" || name == "slug" { // the slug is the block's label
			continue
		}
		ft := sf.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		f := field{json: name, typ: ft}
		hname := snake(name)
		switch {
		case ft.Kind() == reflect.Struct && ft != timeType:
			f.block = true
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			f.block, f.list, f.typ = true, true, ft.Elem()
			hname = strings.TrimSuffix(hname, "s")
		}
		out[hname] = f
	}
	return out
}

// decodeBody turns a block's body into the JSON object of type t,
// recording where each field was written under its JSON path.
func decodeBody(body *hclsyntax.Body, t reflect.Type, path string, spans map[string]hcl.Range) (map[string]any, error) {
	fields := fieldsOf(t)
	obj := map[string]any{}
	for _, a := range sortedAttrs(body) {
		f, ok := fields[a.Name]
		if !ok || f.block {
			return nil, unknownField(a.NameRange, a.Name, fields, ok)
		}
		p := join(path, f.json)
		spans[p] = a.SrcRange
		v, diags := a.Expr.Value(nil)
		if diags.HasErrors() {
			return nil, diagError(diags)
		}
		if v.IsNull() {
			continue
		}
		jv, err := jsonValue(v, f.typ)
		if err != nil {
			return nil, atRange(a.Expr.Range(), "%s: %v", a.Name, err)
		}
		obj[f.json] = jv
	}
	for _, b := range body.Blocks {
		f, ok := fields[b.Type]
		if !ok || !f.block {
			return nil, unknownField(b.TypeRange, b.Type, fields, ok)
		}
		if len(b.Labels) > 0 {
			return nil, atRange(b.LabelRanges[0], "a %s block takes no label", b.Type)
		}
		if err := decodeBlock(b, f, obj, path, spans); err != nil {
			return nil, err
		}
	}
	return obj, nil
}

// decodeBlock adds one nested block to obj.
func decodeBlock(b *hclsyntax.Block, f field, obj map[string]any, path string, spans map[string]hcl.Range) error {
	p := join(path, f.json)
	if f.list {
		list, _ := obj[f.json].([]any)
		p = fmt.Sprintf("%s[%d]", p, len(list))
	} else if _, dup := obj[f.json]; dup {
		return atRange(b.TypeRange, "only one %s block", b.Type)
	}
	spans[p] = b.DefRange()
	inner, err := decodeBody(b.Body, f.typ, p, spans)
	if err != nil {
		return err
	}
	if f.list {
		list, _ := obj[f.json].([]any)
		obj[f.json] = append(list, inner)
	} else {
		obj[f.json] = inner
	}
	return nil
}

func unknownField(r hcl.Range, name string, fields map[string]field, known bool) error {
	if known {
		if fields[name].block {
			return atRange(r, "%s is a block: write %s { … }", name, name)
		}
		return atRange(r, "%s is an argument: write %s = …", name, name)
	}
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	sort.Strings(names)
	return atRange(r, "unknown field %q; known here: %s", name, strings.Join(names, ", "))
}

// jsonValue converts an HCL value to the JSON value of a field of type t.
func jsonValue(v cty.Value, t reflect.Type) (any, error) {
	if !v.IsWhollyKnown() {
		return nil, fmt.Errorf("must be a plain value")
	}
	switch {
	case t == timeType:
		s, err := stringOf(v)
		if err != nil {
			return nil, err
		}
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return nil, fmt.Errorf("%q is not an RFC 3339 time (2026-12-24T18:00:00Z)", s)
		}
		return s, nil
	case t.Kind() == reflect.String:
		return stringOf(v)
	case t.Kind() == reflect.Bool:
		if v.Type() != cty.Bool {
			return nil, fmt.Errorf("must be true or false")
		}
		return v.True(), nil
	case t.Kind() == reflect.Int:
		return intOf(v)
	case t.Kind() == reflect.Float64:
		if v.Type() != cty.Number {
			return nil, fmt.Errorf("must be a number")
		}
		f, _ := v.AsBigFloat().Float64()
		return f, nil
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		return stringsOf(v, false)
	case t.Kind() == reflect.Map && t.Elem().Kind() == reflect.String:
		return stringsOf(v, true)
	}
	return nil, fmt.Errorf("cannot be set from a rooms file")
}

func stringOf(v cty.Value) (string, error) {
	if v.Type() != cty.String {
		return "", fmt.Errorf("must be a string")
	}
	return v.AsString(), nil
}

func intOf(v cty.Value) (int, error) {
	if v.Type() != cty.Number {
		return 0, fmt.Errorf("must be a whole number")
	}
	bf := v.AsBigFloat()
	i, acc := bf.Int64()
	if !bf.IsInt() || acc != 0 || i > 1<<31 || i < -(1<<31) {
		return 0, fmt.Errorf("must be a whole number")
	}
	return int(i), nil
}

// stringsOf reads a list of strings, or an object of strings by key.
func stringsOf(v cty.Value, keyed bool) (any, error) {
	t := v.Type()
	if keyed && !(t.IsObjectType() || t.IsMapType()) {
		return nil, fmt.Errorf("must be an object of strings: { de = \"…\" }")
	}
	if !keyed && !(t.IsTupleType() || t.IsListType()) {
		return nil, fmt.Errorf("must be a list of strings: [\"…\"]")
	}
	list, byKey := []any{}, map[string]any{}
	for it := v.ElementIterator(); it.Next(); {
		k, e := it.Element()
		if e.IsNull() || e.Type() != cty.String {
			return nil, fmt.Errorf("every element must be a string")
		}
		if keyed {
			byKey[k.AsString()] = e.AsString()
		} else {
			list = append(list, e.AsString())
		}
	}
	if keyed {
		return byKey, nil
	}
	return list, nil
}

func sortedAttrs(body *hclsyntax.Body) []*hclsyntax.Attribute {
	out := make([]*hclsyntax.Attribute, 0, len(body.Attributes))
	for _, a := range body.Attributes {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SrcRange.Start.Byte < out[j].SrcRange.Start.Byte })
	return out
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// snake is a JSON name as the file writes it: tokenTtlSeconds is
// token_ttl_seconds.
func snake(name string) string {
	var b strings.Builder
	for _, r := range name {
		if unicode.IsUpper(r) {
			b.WriteByte('_')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// HCLPath is a JSON path (autoRate.rules[0].metric) as the file writes it
// (auto_rate.rule[0].metric).
func HCLPath(p string) string {
	parts := strings.Split(p, ".")
	for i, s := range parts {
		name, idx, indexed := strings.Cut(s, "[")
		name = snake(name)
		if indexed {
			name = strings.TrimSuffix(name, "s") + "[" + idx
		}
		parts[i] = name
	}
	return strings.Join(parts, ".")
}

// atRange is an error that starts with file:line.
func atRange(r hcl.Range, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", r.Filename, r.Start.Line, fmt.Sprintf(format, args...))
}

func diagError(diags hcl.Diagnostics) error {
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += ": " + d.Detail
		}
		if d.Subject != nil {
			return atRange(*d.Subject, "%s", msg)
		}
		return fmt.Errorf("%s", msg)
	}
	return diags
}
