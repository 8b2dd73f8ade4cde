package aditus

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/transport/roomsfile"
)

func newCapacityRoom() resource.Resource {
	return &capacityResource{base{suffix: "_capacity_room"}}
}

// capacityResource is a capacity room's runtime settings. The room itself
// is declared in the proxies' HCL file and cannot be created or deleted
// here: creating the resource adopts the room the proxies serve, and
// destroying it puts every setting back to the file's. An attribute left
// out is the file's value.
type capacityResource struct{ base }

type capacityModel struct {
	ID                     types.String  `tfsdk:"id"`
	Host                   types.String  `tfsdk:"host"`
	Name                   types.String  `tfsdk:"name"`
	Version                types.String  `tfsdk:"version"`
	Active                 types.Int64   `tfsdk:"active"`
	Paused                 types.Bool    `tfsdk:"paused"`
	Open                   types.Bool    `tfsdk:"open"`
	PowPerMinute           types.Float64 `tfsdk:"pow_per_minute"`
	PowBits                types.Int64   `tfsdk:"pow_bits"`
	PowMaxBits             types.Int64   `tfsdk:"pow_max_bits"`
	AddressBudgetPerMinute types.Float64 `tfsdk:"address_budget_per_minute"`
	AddressBudgetBurst     types.Int64   `tfsdk:"address_budget_burst"`
}

func (r *capacityResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	opt := func(doc string) schema.Int64Attribute { return schema.Int64Attribute{Optional: true, Description: doc} }
	resp.Schema = schema.Schema{
		Description: "A capacity room's runtime settings over the proxies' HCL file, as the console changes them. " +
			"An attribute left out is the file's value; destroying the resource puts every setting back to the file's. Import by the room's id (c…).",
		Attributes: map[string]schema.Attribute{
			"id":                        schema.StringAttribute{Computed: true, PlanModifiers: kept},
			"host":                      schema.StringAttribute{Required: true, PlanModifiers: replaced, Description: "The host block of the proxies' file."},
			"name":                      schema.StringAttribute{Required: true, PlanModifiers: replaced, Description: "The room's name as the console lists it (its location, \"/\")."},
			"version":                   schema.StringAttribute{Computed: true, Description: "The runtime's version as last read: a change over another is refused."},
			"active":                    opt("Visitors inside at once (1–10,000,000)."),
			"paused":                    schema.BoolAttribute{Optional: true, Description: "Nobody new is let in."},
			"open":                      schema.BoolAttribute{Optional: true, Description: "Everyone is let in."},
			"pow_per_minute":            schema.Float64Attribute{Optional: true, Description: "The automatic proof of work's threshold, arrivals a minute (with pow_bits and pow_max_bits)."},
			"pow_bits":                  opt("Its first difficulty (0–24)."),
			"pow_max_bits":              opt("Its highest difficulty (0–24)."),
			"address_budget_per_minute": schema.Float64Attribute{Optional: true, Description: "New arrivals one address regains a minute (with address_budget_burst)."},
			"address_budget_burst":      opt("New arrivals one address may make at once."),
		},
	}
}

// runtime is the model's settings as the admin API writes them, and the
// fields left to the file.
func (m capacityModel) runtime() (roomsfile.CapacityRuntime, []string, error) {
	var rt roomsfile.CapacityRuntime
	var reset []string
	if m.Active.IsNull() {
		reset = append(reset, "active")
	} else {
		n := int(m.Active.ValueInt64())
		rt.Active = &n
	}
	rt.Paused, reset = boolOr(m.Paused, "paused", reset)
	rt.Open, reset = boolOr(m.Open, "open", reset)
	switch nulls(m.PowPerMinute.IsNull(), m.PowBits.IsNull(), m.PowMaxBits.IsNull()) {
	case 3:
		reset = append(reset, "pow")
	case 0:
		rt.Pow = &roomsfile.CapacityPow{PerMinute: m.PowPerMinute.ValueFloat64(), Bits: int(m.PowBits.ValueInt64()), MaxBits: int(m.PowMaxBits.ValueInt64())}
	default:
		return rt, nil, fmt.Errorf("pow_per_minute, pow_bits and pow_max_bits go together")
	}
	switch nulls(m.AddressBudgetPerMinute.IsNull(), m.AddressBudgetBurst.IsNull()) {
	case 2:
		reset = append(reset, "addressBudget")
	case 0:
		rt.AddressBudget = &room.AddressBudget{PerMinute: m.AddressBudgetPerMinute.ValueFloat64(), Burst: int(m.AddressBudgetBurst.ValueInt64())}
	default:
		return rt, nil, fmt.Errorf("address_budget_per_minute and address_budget_burst go together")
	}
	return rt, reset, nil
}

func boolOr(v types.Bool, field string, reset []string) (*bool, []string) {
	if v.IsNull() {
		return nil, append(reset, field)
	}
	b := v.ValueBool()
	return &b, reset
}

func nulls(isNull ...bool) int {
	n := 0
	for _, b := range isNull {
		if b {
			n++
		}
	}
	return n
}

// set writes the runtime as the node holds it into the model.
func (m *capacityModel) set(st roomsfile.CapacityState) {
	rt := st.Runtime
	m.ID, m.Host, m.Name, m.Version = types.StringValue(st.ID), types.StringValue(st.Host), types.StringValue(st.Name), types.StringValue(st.Version)
	m.Active = types.Int64Null()
	if rt.Active != nil {
		m.Active = types.Int64Value(int64(*rt.Active))
	}
	m.Paused, m.Open = types.BoolPointerValue(rt.Paused), types.BoolPointerValue(rt.Open)
	m.PowPerMinute, m.PowBits, m.PowMaxBits = types.Float64Null(), types.Int64Null(), types.Int64Null()
	if p := rt.Pow; p != nil {
		m.PowPerMinute, m.PowBits, m.PowMaxBits = types.Float64Value(p.PerMinute), types.Int64Value(int64(p.Bits)), types.Int64Value(int64(p.MaxBits))
	}
	m.AddressBudgetPerMinute, m.AddressBudgetBurst = types.Float64Null(), types.Int64Null()
	if b := rt.AddressBudget; b != nil {
		m.AddressBudgetPerMinute, m.AddressBudgetBurst = types.Float64Value(b.PerMinute), types.Int64Value(int64(b.Burst))
	}
}

// find reads the capacity room by id, or by host and name when id is "".
func (r *capacityResource) find(ctx context.Context, id, host, name string) (roomsfile.CapacityState, bool, error) {
	rooms, err := r.c.CapacityRooms(ctx)
	if err != nil {
		return roomsfile.CapacityState{}, false, err
	}
	for _, st := range rooms {
		if st.ID == id || (id == "" && st.Host == host && st.Name == name) {
			return st, true, nil
		}
	}
	return roomsfile.CapacityState{}, false, nil
}

// write sends the model's settings over version and stores the answer.
func (r *capacityResource) write(ctx context.Context, m *capacityModel, id, version string) error {
	rt, reset, err := m.runtime()
	if err != nil {
		return err
	}
	err = r.c.Adjust(ctx, id, version, rt, reset)
	if roomsfile.IsConflict(err) {
		return fmt.Errorf("the room changed on the node since it was read (console, API or another run); nothing was written. Run plan again to see the difference. %w", err)
	}
	if err != nil {
		return err
	}
	st, ok, err := r.find(ctx, id, "", "")
	if err == nil && !ok {
		err = fmt.Errorf("capacity room %s is no longer served", id)
	}
	if err == nil {
		m.set(st)
	}
	return err
}

// Create adopts the room the proxies serve under host and name.
func (r *capacityResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m capacityModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	st, ok, err := r.find(ctx, "", m.Host.ValueString(), m.Name.ValueString())
	if err == nil && !ok {
		err = fmt.Errorf("no proxy node serves capacity room %s %s (capacity rooms are declared in the proxies' HCL file)", m.Host.ValueString(), m.Name.ValueString())
	}
	if err == nil {
		err = r.write(ctx, &m, st.ID, st.Version)
	}
	if err != nil {
		resp.Diagnostics.AddError("capacity room", err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *capacityResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m capacityModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	st, ok, err := r.find(ctx, m.ID.ValueString(), "", "")
	if err != nil {
		resp.Diagnostics.AddError("read capacity room", err.Error())
		return
	}
	if !ok {
		resp.State.RemoveResource(ctx) // no proxy node serves it any more
		return
	}
	m.set(st)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *capacityResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m, prior capacityModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := r.write(ctx, &m, prior.ID.ValueString(), prior.Version.ValueString()); err != nil {
		resp.Diagnostics.AddError("update capacity room", err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// Delete puts every setting back to the proxies' file.
func (r *capacityResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m capacityModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	err := r.c.Adjust(ctx, m.ID.ValueString(), m.Version.ValueString(), roomsfile.CapacityRuntime{}, roomsfile.RuntimeFields)
	if err != nil && !roomsfile.IsNotFound(err) {
		resp.Diagnostics.AddError("reset capacity room", err.Error())
	}
}

func (r *capacityResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resource.ImportStatePassthroughID(ctx, path.Root("id"), req, resp)
}

// ValidateConfig refuses half a proof-of-work or budget setting before
// any request.
func (r *capacityResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m capacityModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if _, _, err := m.runtime(); err != nil {
		resp.Diagnostics.AddError("aditus_capacity_room", err.Error())
	}
}

var (
	_ resource.ResourceWithImportState    = (*capacityResource)(nil)
	_ resource.ResourceWithConfigure      = (*capacityResource)(nil)
	_ resource.ResourceWithValidateConfig = (*capacityResource)(nil)
)
