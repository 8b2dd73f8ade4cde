package aditus

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/aditus-queue/aditus-queue/transport/roomsfile"
)

func newAPIKey() resource.Resource { return &apiKeyResource{base{suffix: "_api_key"}} }

// apiKeyResource is a room's qak_ API key. The node shows the key once, at
// creation, and keeps only its hash: the key lives in the state as a
// sensitive value, and an imported key has none.
type apiKeyResource struct{ base }

type apiKeyModel struct {
	ID        types.String `tfsdk:"id"`
	RoomID    types.String `tfsdk:"room_id"`
	Name      types.String `tfsdk:"name"`
	Key       types.String `tfsdk:"key"`
	CreatedAt types.String `tfsdk:"created_at"`
}

// replaced are the plan modifiers of an attribute whose change makes a new
// key (or batch): the node cannot change one in place.
var replaced = []planmodifier.String{stringplanmodifier.RequiresReplace()}

// kept are the plan modifiers of a value the node fixes at creation.
var kept = []planmodifier.String{stringplanmodifier.UseStateForUnknown()}

func (r *apiKeyResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "A qak_ API key of one room. Import by \"<room id>/<key id>\" (the key itself cannot be read back).",
		Attributes: map[string]schema.Attribute{
			"id":         schema.StringAttribute{Computed: true, PlanModifiers: kept},
			"room_id":    schema.StringAttribute{Required: true, PlanModifiers: replaced, Description: "The room's id (aditus_room.x.id)."},
			"name":       schema.StringAttribute{Required: true, PlanModifiers: replaced, Description: "Who uses the key; shown in the audit trail."},
			"key":        schema.StringAttribute{Computed: true, Sensitive: true, PlanModifiers: kept, Description: "The key, shown by the node once."},
			"created_at": schema.StringAttribute{Computed: true, PlanModifiers: kept},
		},
	}
}

type keyJSON struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Key       string `json:"key"`
	CreatedAt string `json:"createdAt"`
}

func (r *apiKeyResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m apiKeyModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var k keyJSON
	_, err := r.c.Do(ctx, http.MethodPost, roomsfile.SitePath(m.RoomID.ValueString(), "/keys"), "", map[string]string{"name": m.Name.ValueString()}, &k)
	if err != nil {
		resp.Diagnostics.AddError("create API key", err.Error())
		return
	}
	m.ID, m.Key, m.CreatedAt = types.StringValue(k.ID), types.StringValue(k.Key), types.StringValue(k.CreatedAt)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *apiKeyResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m apiKeyModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var list struct {
		Keys []keyJSON `json:"keys"`
	}
	_, err := r.c.Do(ctx, http.MethodGet, roomsfile.SitePath(m.RoomID.ValueString(), "/keys"), "", nil, &list)
	if roomsfile.IsNotFound(err) {
		resp.State.RemoveResource(ctx) // the room is gone, and its keys with it
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("read API keys", err.Error())
		return
	}
	for _, k := range list.Keys {
		if k.ID == m.ID.ValueString() {
			m.Name, m.CreatedAt = types.StringValue(k.Name), types.StringValue(k.CreatedAt)
			resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
			return
		}
	}
	resp.State.RemoveResource(ctx) // revoked outside
}

func (r *apiKeyResource) Update(_ context.Context, _ resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.Diagnostics.AddError("API key", "a key cannot be changed in place; every attribute replaces it")
}

func (r *apiKeyResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m apiKeyModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	_, err := r.c.Do(ctx, http.MethodDelete, roomsfile.SitePath(m.RoomID.ValueString(), "/keys/"+url.PathEscape(m.ID.ValueString())), "", nil, nil)
	if err != nil && !roomsfile.IsNotFound(err) {
		resp.Diagnostics.AddError("revoke API key", err.Error())
	}
}

func (r *apiKeyResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	roomID, id, ok := splitImportID(req.ID)
	if !ok {
		resp.Diagnostics.AddError("import API key", "want \"<room id>/<key id>\"")
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("room_id"), roomID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), id)...)
}

// splitImportID splits "<room id>/<rest>".
func splitImportID(s string) (string, string, bool) {
	roomID, rest, ok := strings.Cut(s, "/")
	return roomID, rest, ok && roomID != "" && rest != ""
}

var (
	_ resource.ResourceWithImportState = (*apiKeyResource)(nil)
	_ resource.ResourceWithConfigure   = (*apiKeyResource)(nil)
)
