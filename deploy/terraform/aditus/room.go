package aditus

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/float64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/transport/roomsfile"
)

// kind is the type of a room attribute.
type kind int

const (
	kString kind = iota
	kBool
	kInt
	kFloat
	kStrings
	kMap  // an object of strings by key
	kTime // RFC 3339, or null
)

// nullable is the default of an attribute that is null when left out.
type nullable struct{}

// roomAttr is one attribute of aditus_room and the admin API field it
// stands for (a JSON path: pow.bits is the bits of the pow object).
type roomAttr struct {
	name, json, doc string
	kind            kind
	def             any // nil: required; nullable{}: null when left out
}

// roomAttrs are the fields the resource manages. The others (the
// self-regulating rate, events) are left as they are on the node: an update
// writes the managed fields over the room as read.
var roomAttrs = []roomAttr{
	{"name", "name", "The room's title shown to visitors.", kString, nil},
	{"rate_per_minute", "ratePerMinute", "Visitors admitted per minute.", kFloat, nil},
	{"target_url", "targetUrl", "Where admitted visitors go (absolute http(s)).", kString, ""},
	{"domains", "domains", "The shop's host names (lower case, *. allowed).", kStrings, []string{}},
	{"active", "active", "false pauses the room.", kBool, true},
	{"message", "message", "Plain text under the title.", kString, ""},
	{"messages", "messages", "The message in other languages, by language code.", kMap, map[string]string{}},
	{"opens_at", "opensAt", "A scheduled opening (RFC 3339 in UTC, as the node keeps it); numbers taken before it are drawn.", kTime, nullable{}},
	{"language", "language", "The waiting page's language; empty: the visitor's.", kString, ""},
	{"header_image_url", "headerImageUrl", "An image over the page.", kString, ""},
	{"accent_color", "accentColor", "#rrggbb of the progress bar.", kString, ""},
	{"token_ttl_seconds", "tokenTtlSeconds", "The admission token's lifetime.", kInt, room.DefaultTokenTTLSeconds},
	{"burst_seconds", "burstSeconds", "Unused capacity a quiet room keeps, in seconds of the rate.", kFloat, float64(room.DefaultBurstSeconds)},
	{"pow_enabled", "pow.enabled", "Ask for proof of work before a number.", kBool, false},
	{"pow_bits", "pow.bits", "The proof of work's difficulty (8–24).", kInt, room.DefaultPowBits},
	{"pow_auto", "pow.auto", "Turn proof of work on by itself under pressure.", kBool, false},
	{"pow_auto_factor", "pow.autoFactor", "pow_auto's threshold in multiples of the rate.", kFloat, float64(room.DefaultPowAutoFactor)},
	{"abandon_enabled", "abandon.enabled", "Skip numbers whose visitors left.", kBool, false},
	{"abandon_grace_seconds", "abandon.graceSeconds", "Silence before a number counts as abandoned.", kInt, room.DefaultGraceSeconds},
	{"allow_bare_number", "allowBareNumber", "Accept a number without its ticket.", kBool, false},
	{"test", "test", "A test room: the only kind a load test may aim at.", kBool, false},
	{"address_budget_per_minute", "addressBudget.perMinute", "New numbers one address regains per minute.", kFloat, float64(room.DefaultBudgetPerMinute)},
	{"address_budget_burst", "addressBudget.burst", "New numbers one address may take at once.", kInt, room.DefaultBudgetBurst},
	{"mode", "mode", "queue, passthrough, soldOut, maintenance or queueAll.", kString, room.ModeQueue},
	{"waiting_status", "waitingStatus", "The HTTP status of a JSON \"you are waiting\": 200, 202 or 429.", kInt, 200},
	{"sold_out_message_en", "soldOutMessage.en", "The English message shown while the mode is soldOut.", kString, ""},
	{"sold_out_message_de", "soldOutMessage.de", "The German message shown while the mode is soldOut.", kString, ""},
	{"sold_out_message_texts", "soldOutMessage.texts", "The message shown while the mode is soldOut in other languages, by code.", kMap, map[string]string{}},
	{"sold_out_message_link_url", "soldOutMessage.linkUrl", "An absolute http(s) URL offered under it.", kString, ""},
	{"maintenance_message_en", "maintenanceMessage.en", "The English message shown while the mode is maintenance.", kString, ""},
	{"maintenance_message_de", "maintenanceMessage.de", "The German message shown while the mode is maintenance.", kString, ""},
	{"maintenance_message_texts", "maintenanceMessage.texts", "The message shown while the mode is maintenance in other languages, by code.", kMap, map[string]string{}},
	{"maintenance_message_link_url", "maintenanceMessage.linkUrl", "An absolute http(s) URL offered under it.", kString, ""},
}

func newRoom() resource.Resource { return &roomResource{base{suffix: "_room"}} }

type roomResource struct{ base }

func (r *roomResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	keep := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	attrs := map[string]schema.Attribute{
		"id": schema.StringAttribute{Computed: true, PlanModifiers: keep, Description: "The room's id; import by it."},
		"slug": schema.StringAttribute{Required: true, Description: "Names the room in every visitor URL; changing it replaces the room.",
			PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}},
		"version": schema.StringAttribute{Computed: true, Description: "The room's version as last read (its ETag): an update over a room changed since is refused."},
		"secret": schema.StringAttribute{Computed: true, Sensitive: true, PlanModifiers: keep,
			Description: "The token-signing secret, shown by the node once at creation (null after an import)."},
	}
	for _, a := range roomAttrs {
		attrs[a.name] = a.schema()
	}
	resp.Schema = schema.Schema{
		Description: "A rate room. Fields left out take the node's defaults; the self-regulating rate, events, translated messages and the opening are not managed here and are kept as they are.",
		Attributes:  attrs,
	}
}

func (a roomAttr) schema() schema.Attribute {
	req, opt := a.def == nil, a.def != nil
	switch a.kind {
	case kBool:
		s := schema.BoolAttribute{Required: req, Optional: opt, Computed: opt, Description: a.doc}
		if opt {
			s.Default = booldefault.StaticBool(a.def.(bool))
		}
		return s
	case kInt:
		s := schema.Int64Attribute{Required: req, Optional: opt, Computed: opt, Description: a.doc}
		if opt {
			s.Default = int64default.StaticInt64(int64(a.def.(int)))
		}
		return s
	case kFloat:
		s := schema.Float64Attribute{Required: req, Optional: opt, Computed: opt, Description: a.doc}
		if opt {
			s.Default = float64default.StaticFloat64(a.def.(float64))
		}
		return s
	case kStrings:
		return schema.ListAttribute{ElementType: types.StringType, Optional: true, Computed: true, Description: a.doc,
			Default: listdefault.StaticValue(types.ListValueMust(types.StringType, []attr.Value{}))}
	case kMap:
		return schema.MapAttribute{ElementType: types.StringType, Optional: true, Computed: true, Description: a.doc,
			Default: mapdefault.StaticValue(types.MapValueMust(types.StringType, map[string]attr.Value{}))}
	case kTime:
		return schema.StringAttribute{Optional: true, Description: a.doc}
	}
	s := schema.StringAttribute{Required: req, Optional: opt, Computed: opt, Description: a.doc}
	if opt {
		s.Default = stringdefault.StaticString(a.def.(string))
	}
	return s
}

// getter is a plan, a state or a configuration.
type getter interface {
	GetAttribute(context.Context, path.Path, any) diag.Diagnostics
}

// fields reads the managed attributes from g as JSON paths and values. A
// null attribute takes its default (a configuration leaves them null); known
// is false while one is not known yet (at validation).
func fields(ctx context.Context, g getter) (map[string]any, bool, diag.Diagnostics) {
	out := map[string]any{}
	var diags diag.Diagnostics
	known := true
	for _, a := range roomAttrs {
		val, unknown, d := readAttr(ctx, g, a)
		diags.Append(d...)
		switch {
		case unknown:
			known = false
		case val != nil:
			out[a.json] = val
		case a.def == nullable{}:
			out[a.json] = nil // written as null: a removed opening is cleared
		case a.def != nil:
			out[a.json] = a.def
		}
	}
	return out, known, diags
}

// readAttr is one attribute's value as JSON: nil when null or unknown.
func readAttr(ctx context.Context, g getter, a roomAttr) (any, bool, diag.Diagnostics) {
	p := path.Root(a.name)
	switch a.kind {
	case kBool:
		var v types.Bool
		d := g.GetAttribute(ctx, p, &v)
		return valueOf(v, v.ValueBool()), v.IsUnknown(), d
	case kInt:
		var v types.Int64
		d := g.GetAttribute(ctx, p, &v)
		return valueOf(v, v.ValueInt64()), v.IsUnknown(), d
	case kFloat:
		var v types.Float64
		d := g.GetAttribute(ctx, p, &v)
		return valueOf(v, v.ValueFloat64()), v.IsUnknown(), d
	case kStrings:
		var v types.List
		d := g.GetAttribute(ctx, p, &v)
		if v.IsNull() || v.IsUnknown() {
			return nil, v.IsUnknown(), d
		}
		list := []string{}
		d.Append(v.ElementsAs(ctx, &list, false)...)
		return list, false, d
	case kMap:
		var v types.Map
		d := g.GetAttribute(ctx, p, &v)
		if v.IsNull() || v.IsUnknown() {
			return nil, v.IsUnknown(), d
		}
		m := map[string]string{}
		d.Append(v.ElementsAs(ctx, &m, false)...)
		return m, false, d
	}
	var v types.String
	d := g.GetAttribute(ctx, p, &v)
	return valueOf(v, v.ValueString()), v.IsUnknown(), d
}

func valueOf(v attr.Value, x any) any {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	return x
}

// setFields writes a room as the node answered it into the state.
func setFields(ctx context.Context, st *tfsdk.State, raw map[string]any, version string) diag.Diagnostics {
	var diags diag.Diagnostics
	diags.Append(st.SetAttribute(ctx, path.Root("id"), raw["id"])...)
	diags.Append(st.SetAttribute(ctx, path.Root("slug"), raw["slug"])...)
	diags.Append(st.SetAttribute(ctx, path.Root("version"), version)...)
	for _, a := range roomAttrs {
		v := lookup(raw, a.json)
		var val any
		switch a.kind {
		case kBool:
			b, _ := v.(bool)
			val = b
		case kInt:
			f, _ := v.(float64)
			val = int64(f)
		case kFloat:
			f, _ := v.(float64)
			val = f
		case kStrings:
			list := []string{}
			for _, e := range asList(v) {
				s, _ := e.(string)
				list = append(list, s)
			}
			val = list
		case kMap:
			m := map[string]string{}
			obj, _ := v.(map[string]any)
			for k, e := range obj {
				m[k], _ = e.(string)
			}
			val = m
		case kTime:
			s, ok := v.(string)
			val = types.StringNull()
			if ok {
				val = types.StringValue(s)
			}
		default:
			s, _ := v.(string)
			val = s
		}
		diags.Append(st.SetAttribute(ctx, path.Root(a.name), val)...)
	}
	return diags
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// lookup follows a JSON path (pow.bits) in an object.
func lookup(obj map[string]any, p string) any {
	var cur any = obj
	for _, k := range strings.Split(p, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}

// put sets a JSON path in an object, making the objects on the way.
func put(obj map[string]any, p string, v any) {
	keys := strings.Split(p, ".")
	for _, k := range keys[:len(keys)-1] {
		next, ok := obj[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			obj[k] = next
		}
		obj = next
	}
	obj[keys[len(keys)-1]] = v
}

// readRoom reads a room as raw JSON with its version.
func readRoom(ctx context.Context, c *roomsfile.Client, id string) (map[string]any, string, error) {
	raw := map[string]any{}
	h, err := c.Do(ctx, http.MethodGet, roomsfile.SitePath(id, ""), "", nil, &raw)
	if err != nil {
		return nil, "", err
	}
	return raw, h.Get("ETag"), nil
}

func (r *roomResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	vals, _, diags := fields(ctx, req.Plan)
	resp.Diagnostics.Append(diags...)
	var slug types.String
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("slug"), &slug)...)
	if resp.Diagnostics.HasError() {
		return
	}
	body := map[string]any{"slug": slug.ValueString()}
	for p, v := range vals {
		put(body, p, v)
	}
	var created struct {
		Site   map[string]any `json:"site"`
		Secret string         `json:"secret"`
	}
	if _, err := r.c.Do(ctx, http.MethodPost, "/api/admin/queue/sites", "", body, &created); err != nil {
		resp.Diagnostics.AddError("create room "+slug.ValueString(), err.Error())
		return
	}
	id, _ := created.Site["id"].(string)
	raw, version, err := readRoom(ctx, r.c, id)
	if err != nil {
		resp.Diagnostics.AddError("read room "+slug.ValueString()+" after creating it", err.Error())
		return
	}
	resp.Diagnostics.Append(setFields(ctx, &resp.State, raw, version)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("secret"), created.Secret)...)
}

func (r *roomResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var id types.String
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("id"), &id)...)
	if resp.Diagnostics.HasError() {
		return
	}
	raw, version, err := readRoom(ctx, r.c, id.ValueString())
	if roomsfile.IsNotFound(err) {
		resp.State.RemoveResource(ctx) // deleted outside: the next apply creates it again
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("read room "+id.ValueString(), err.Error())
		return
	}
	resp.Diagnostics.Append(setFields(ctx, &resp.State, raw, version)...)
}

// Update writes the managed fields over the room as read now, with the
// version of the last refresh in If-Match: a room changed in between (the
// console, the API, another run) is refused with a conflict.
func (r *roomResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	vals, _, diags := fields(ctx, req.Plan)
	resp.Diagnostics.Append(diags...)
	var id, version types.String
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("id"), &id)...)
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("version"), &version)...)
	if resp.Diagnostics.HasError() {
		return
	}
	raw, _, err := readRoom(ctx, r.c, id.ValueString())
	if err != nil {
		resp.Diagnostics.AddError("read room "+id.ValueString(), err.Error())
		return
	}
	for p, v := range vals {
		put(raw, p, v)
	}
	var answer map[string]any
	h, err := r.c.Do(ctx, http.MethodPatch, roomsfile.SitePath(id.ValueString(), ""), version.ValueString(), raw, &answer)
	if err != nil {
		msg := err.Error()
		if roomsfile.IsConflict(err) {
			msg = "the room changed on the node since it was read (console, API or another run); nothing was written. Run plan again to see the difference. " + msg
		}
		resp.Diagnostics.AddError("update room "+id.ValueString(), msg)
		return
	}
	resp.Diagnostics.Append(setFields(ctx, &resp.State, answer, h.Get("ETag"))...)
}

func (r *roomResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var id types.String
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("id"), &id)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := r.c.Delete(ctx, id.ValueString()); err != nil && !roomsfile.IsNotFound(err) {
		resp.Diagnostics.AddError("delete room "+id.ValueString(), err.Error())
	}
}

func (r *roomResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resource.ImportStatePassthroughID(ctx, path.Root("id"), req, resp)
}

// ValidateConfig checks the room as the node will, before any request,
// naming the attribute at fault.
func (r *roomResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	vals, known, diags := fields(ctx, req.Config)
	resp.Diagnostics.Append(diags...)
	var slug types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("slug"), &slug)...)
	if !known || slug.IsUnknown() || resp.Diagnostics.HasError() {
		return
	}
	obj := map[string]any{"slug": slug.ValueString()}
	for p, v := range vals {
		put(obj, p, v)
	}
	raw, _ := json.Marshal(obj)
	var cfg room.Config
	if err := json.Unmarshal(raw, &cfg); err != nil {
		resp.Diagnostics.AddError("aditus_room", err.Error())
		return
	}
	norm := roomsfile.Normal(cfg)
	if strings.Join(norm.Domains, ",") != strings.Join(cfg.Domains, ",") {
		resp.Diagnostics.AddAttributeError(path.Root("domains"), "domains", fmt.Sprintf("write them as the node keeps them: %q", norm.Domains))
		return
	}
	if norm.OpensAt != nil && norm.OpensAt.Format(time.RFC3339Nano) != vals["opensAt"] {
		resp.Diagnostics.AddAttributeError(path.Root("opens_at"), "opens_at", fmt.Sprintf("write it as the node keeps it: %q", norm.OpensAt.Format(time.RFC3339Nano)))
		return
	}
	if err := norm.Validate(); err != nil {
		p, msg := path.Root("slug"), err.Error()
		if fe, ok := err.(*room.FieldError); ok {
			msg = fe.Message
			for _, a := range roomAttrs {
				if a.json == fe.Field {
					p = path.Root(a.name)
				}
			}
		}
		resp.Diagnostics.AddAttributeError(p, "invalid room", msg)
	}
}

var (
	_ resource.ResourceWithImportState    = (*roomResource)(nil)
	_ resource.ResourceWithConfigure      = (*roomResource)(nil)
	_ resource.ResourceWithValidateConfig = (*roomResource)(nil)
)
