package api

import (
	_ "embed"
	"net/http"

	"github.com/labstack/echo/v4"
)

// OpenAPI is the OpenAPI 3.1 document of every visitor and admin endpoint,
// served at GET /api/openapi.json. It is written by hand in openapi.json and
// kept true by TestOpenAPIRoutes (package main), which walks the router
// built by serve against it both ways, and TestOpenAPI (deploy/local/e2e),
// which validates the binary's recorded answers against its schemas.
//
//go:embed openapi.json
var OpenAPI []byte

// handleOpenAPI serves the document; it is public, like the visitor API it
// describes, and may be cached for a short time.
func handleOpenAPI(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "public, max-age=300")
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, OpenAPI)
}
