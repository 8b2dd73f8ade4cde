// Package aditus is the provider: its configuration (the node's URL and
// admin token) and its resources, aditus_room, aditus_api_key and
// aditus_bypass_codes. Every call goes through the admin API with the
// client of `aditus-queue rooms` (transport/roomsfile); no secret is ever
// logged, and the ones the API shows once (a room's signing secret, a key,
// the codes) are kept in the state as sensitive values.
package aditus

import (
	"context"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/aditus-queue/aditus-queue/transport/roomsfile"
)

// New returns the provider's constructor.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &aditusProvider{version: version} }
}

type aditusProvider struct{ version string }

type providerModel struct {
	URL        types.String `tfsdk:"url"`
	AdminToken types.String `tfsdk:"admin_token"`
	AllowHTTP  types.Bool   `tfsdk:"allow_http"`
}

func (p *aditusProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "aditus"
	resp.Version = p.version
}

func (p *aditusProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Rooms, API keys and bypass codes of an aditus-queue node, through its admin API.",
		Attributes: map[string]schema.Attribute{
			"url": schema.StringAttribute{Optional: true,
				Description: "The node's base URL (default: the environment variable AQ_URL, else http://localhost:8080)."},
			"admin_token": schema.StringAttribute{Optional: true, Sensitive: true,
				Description: "The operator's admin token (default: the environment variable AQ_ADMIN_TOKEN)."},
			"allow_http": schema.BoolAttribute{Optional: true,
				Description: "Allow plain http to a host other than loopback (the token would cross the network readable)."},
		},
	}
}

func (p *aditusProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var m providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	url := firstOf(m.URL.ValueString(), os.Getenv("AQ_URL"), "http://localhost:8080")
	token := firstOf(m.AdminToken.ValueString(), os.Getenv("AQ_ADMIN_TOKEN"))
	c, err := roomsfile.NewClient(url, token, m.AllowHTTP.ValueBool())
	if err != nil {
		resp.Diagnostics.AddError("aditus provider configuration", err.Error())
		return
	}
	resp.ResourceData = c
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

func (p *aditusProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{newRoom, newAPIKey, newBypassCodes, newCapacityRoom}
}

func (p *aditusProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }

// base is what every resource shares: its name and the provider's client.
type base struct {
	suffix string
	c      *roomsfile.Client
}

func (b *base) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + b.suffix
}

// Configure takes the provider's client; before the provider is
// configured (validation) there is none yet.
func (b *base) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if req.ProviderData == nil {
		return
	}
	c, ok := req.ProviderData.(*roomsfile.Client)
	if !ok {
		resp.Diagnostics.AddError("aditus provider", "unexpected provider data")
	}
	b.c = c
}

var _ provider.Provider = (*aditusProvider)(nil)
