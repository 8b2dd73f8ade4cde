package aditus

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// The schemas as the CLI fetches them: a name the CLI reserves (count,
// for_each…) or an inconsistent attribute fails here, without the CLI.
func TestSchemas(t *testing.T) {
	srv := providerserver.NewProtocol6(New("test")())()
	res, err := srv.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Diagnostics {
		t.Errorf("%s: %s", d.Summary, d.Detail)
	}
	for _, name := range []string{"aditus_room", "aditus_api_key", "aditus_bypass_codes", "aditus_capacity_room"} {
		if res.ResourceSchemas[name] == nil {
			t.Errorf("no resource %s", name)
		}
	}
	for _, a := range res.ResourceSchemas["aditus_room"].Block.Attributes {
		if a.Name == "secret" && !a.Sensitive {
			t.Error("the room's secret is not sensitive")
		}
	}
}
