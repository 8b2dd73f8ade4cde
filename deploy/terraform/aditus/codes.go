package aditus

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/aditus-queue/aditus-queue/transport/roomsfile"
)

// maxBatch bounds the codes of one batch.
const maxBatch = 1000

func newBypassCodes() resource.Resource { return &codesResource{base{suffix: "_bypass_codes"}} }

// codesResource is a batch of bypass (VIP) codes of one room, named by
// their label. The node shows each code once; the codes live in the state
// as a sensitive list, and an imported batch has none.
type codesResource struct{ base }

type codesModel struct {
	ID         types.String `tfsdk:"id"`
	RoomID     types.String `tfsdk:"room_id"`
	Label      types.String `tfsdk:"label"`
	Quantity   types.Int64  `tfsdk:"quantity"`
	UsageLimit types.Int64  `tfsdk:"usage_limit"`
	ExpiresAt  types.String `tfsdk:"expires_at"`
	IDs        types.List   `tfsdk:"ids"`
	Codes      types.List   `tfsdk:"codes"`
}

func (r *codesResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replaceInt := []planmodifier.Int64{int64planmodifier.RequiresReplace()}
	keepList := []planmodifier.List{listplanmodifier.UseStateForUnknown()}
	resp.Schema = schema.Schema{
		Description: "A batch of bypass (VIP) codes of one room, named by its label (one batch per label). " +
			"A change of any attribute replaces the whole batch with new codes. Import by \"<room id>/<label>\" (the codes cannot be read back).",
		Attributes: map[string]schema.Attribute{
			"id":          schema.StringAttribute{Computed: true, PlanModifiers: kept, Description: "\"<room id>/<label>\"."},
			"room_id":     schema.StringAttribute{Required: true, PlanModifiers: replaced},
			"label":       schema.StringAttribute{Required: true, PlanModifiers: replaced, Description: "Names the batch in the console and the audit trail."},
			"quantity":    schema.Int64Attribute{Required: true, PlanModifiers: replaceInt, Description: fmt.Sprintf("How many codes (1–%d).", maxBatch)},
			"usage_limit": schema.Int64Attribute{Optional: true, PlanModifiers: replaceInt, Description: "Uses per code; unset: unlimited."},
			"expires_at":  schema.StringAttribute{Optional: true, PlanModifiers: replaced, Description: "RFC 3339; unset: never."},
			"ids":         schema.ListAttribute{ElementType: types.StringType, Computed: true, PlanModifiers: keepList},
			"codes": schema.ListAttribute{ElementType: types.StringType, Computed: true, Sensitive: true, PlanModifiers: keepList,
				Description: "The codes, shown by the node once."},
		},
	}
}

type codeJSON struct {
	ID         string  `json:"id"`
	Code       string  `json:"code"`
	Label      string  `json:"label"`
	UsageLimit *int64  `json:"usageLimit"`
	ExpiresAt  *string `json:"expiresAt"`
}

func (r *codesResource) list(ctx context.Context, roomID, label string) ([]codeJSON, error) {
	var list struct {
		Codes []codeJSON `json:"codes"`
	}
	if _, err := r.c.Do(ctx, http.MethodGet, roomsfile.SitePath(roomID, "/bypass-codes"), "", nil, &list); err != nil {
		return nil, err
	}
	var out []codeJSON
	for _, c := range list.Codes {
		if c.Label == label {
			out = append(out, c)
		}
	}
	return out, nil
}

func (r *codesResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m codesModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	roomID, label := m.RoomID.ValueString(), m.Label.ValueString()
	if n := m.Quantity.ValueInt64(); n < 1 || n > maxBatch {
		resp.Diagnostics.AddAttributeError(path.Root("quantity"), "bypass codes", fmt.Sprintf("quantity must be 1–%d", maxBatch))
		return
	}
	if have, err := r.list(ctx, roomID, label); err != nil || len(have) > 0 {
		resp.Diagnostics.AddError("bypass codes", fmt.Sprintf("room %s: codes labelled %q exist already (import them as %s/%s), or the list failed: %v", roomID, label, roomID, label, err))
		return
	}
	body := map[string]any{"label": label}
	if !m.UsageLimit.IsNull() {
		body["usageLimit"] = m.UsageLimit.ValueInt64()
	}
	if !m.ExpiresAt.IsNull() {
		body["expiresAt"] = m.ExpiresAt.ValueString()
	}
	var ids, codes []attr.Value
	for range m.Quantity.ValueInt64() {
		var c codeJSON
		if _, err := r.c.Do(ctx, http.MethodPost, roomsfile.SitePath(roomID, "/bypass-codes"), "", body, &c); err != nil {
			resp.Diagnostics.AddError("create bypass code", fmt.Sprintf("after %d of %d: %v", len(ids), m.Quantity.ValueInt64(), err))
			_ = r.remove(ctx, roomID, ids) // no half batch left behind; the error above is the one to report
			return
		}
		ids, codes = append(ids, types.StringValue(c.ID)), append(codes, types.StringValue(c.Code))
	}
	m.ID = types.StringValue(roomID + "/" + label)
	m.IDs = types.ListValueMust(types.StringType, ids)
	m.Codes = types.ListValueMust(types.StringType, codes)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *codesResource) remove(ctx context.Context, roomID string, ids []attr.Value) error {
	for _, id := range ids {
		s, _ := id.(types.String)
		_, err := r.c.Do(ctx, http.MethodDelete, roomsfile.SitePath(roomID, "/bypass-codes/"+url.PathEscape(s.ValueString())), "", nil, nil)
		if err != nil && !roomsfile.IsNotFound(err) {
			return err
		}
	}
	return nil
}

func (r *codesResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m codesModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	have, err := r.list(ctx, m.RoomID.ValueString(), m.Label.ValueString())
	if roomsfile.IsNotFound(err) || (err == nil && len(have) == 0) {
		resp.State.RemoveResource(ctx) // the room or the codes are gone: the next apply makes a batch
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("read bypass codes", err.Error())
		return
	}
	ids := make([]attr.Value, 0, len(have))
	for _, c := range have {
		ids = append(ids, types.StringValue(c.ID))
	}
	m.ID = types.StringValue(m.RoomID.ValueString() + "/" + m.Label.ValueString())
	m.IDs = types.ListValueMust(types.StringType, ids)
	m.Quantity = types.Int64Value(int64(len(have)))
	m.UsageLimit = types.Int64PointerValue(have[0].UsageLimit)
	if !sameInstant(m.ExpiresAt, have[0].ExpiresAt) {
		m.ExpiresAt = types.StringPointerValue(have[0].ExpiresAt)
	}
	if m.Codes.IsNull() || m.Codes.IsUnknown() {
		m.Codes = types.ListNull(types.StringType) // imported: the codes cannot be read back
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// sameInstant reports whether the state's expiry names the node's
// instant, however it is written.
func sameInstant(st types.String, node *string) bool {
	if st.IsNull() || node == nil {
		return st.IsNull() && node == nil
	}
	a, errA := time.Parse(time.RFC3339, st.ValueString())
	b, errB := time.Parse(time.RFC3339, *node)
	return errA == nil && errB == nil && a.Equal(b)
}

func (r *codesResource) Update(_ context.Context, _ resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.Diagnostics.AddError("bypass codes", "a batch cannot be changed in place; every attribute replaces it")
}

func (r *codesResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m codesModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := r.remove(ctx, m.RoomID.ValueString(), m.IDs.Elements()); err != nil && !roomsfile.IsNotFound(err) {
		resp.Diagnostics.AddError("delete bypass codes", err.Error())
	}
}

func (r *codesResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	roomID, label, ok := splitImportID(req.ID)
	if !ok {
		resp.Diagnostics.AddError("import bypass codes", "want \"<room id>/<label>\"")
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("room_id"), roomID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("label"), label)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
}

var (
	_ resource.ResourceWithImportState = (*codesResource)(nil)
	_ resource.ResourceWithConfigure   = (*codesResource)(nil)
)
