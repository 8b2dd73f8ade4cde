// Command terraform-provider-aditus is the Terraform (and OpenTofu)
// provider of aditus-queue: rooms, API keys and bypass codes managed
// through a node's admin API.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/aditus-queue/aditus-queue/deploy/terraform/aditus"
)

// version is set at release time (-ldflags "-X main.version=…").
var version = "dev"

func main() {
	debug := flag.Bool("debug", false, "run with support for debuggers (the CLI attaches through TF_REATTACH_PROVIDERS)")
	flag.Parse()
	err := providerserver.Serve(context.Background(), aditus.New(version), providerserver.ServeOpts{
		Address: "registry.opentofu.org/aditus-queue/aditus",
		Debug:   *debug,
	})
	if err != nil {
		log.Fatal(err)
	}
}
