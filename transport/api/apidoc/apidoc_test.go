package apidoc

import (
	"net/http"
	"strings"
	"testing"

	"github.com/aditus-queue/aditus-queue/transport/api"
)

// The embedded document is a valid OpenAPI 3.1 document whose schemas all
// compile; an answer with a status the document does not name is refused,
// and the operation stays unanswered until a valid answer reaches it.
func TestDocument(t *testing.T) {
	if err := ValidOpenAPI(api.OpenAPI); err != nil {
		t.Fatal(err)
	}
	if err := ValidOpenAPI([]byte(`{"openapi":"3.1.0"}`)); err == nil {
		t.Fatal("a document without info and paths passed as OpenAPI 3.1")
	}
	d := Load(t, api.OpenAPI)
	for _, err := range d.CompileAll() {
		t.Error(err)
	}
	if !strings.Contains(strings.Join(d.Routes(), "\n"), "GET /queue/healthz") {
		t.Fatalf("routes lack GET /queue/healthz: %v", d.Routes())
	}
	h := http.Header{"Content-Type": {"application/json"}}
	if err := d.CheckAnswer("GET", "/queue/healthz", http.StatusTeapot, h, []byte(`{}`)); err == nil {
		t.Fatal("an undocumented status passed")
	}
	if !strings.Contains(strings.Join(d.Unanswered(), "\n"), "GET /queue/healthz") {
		t.Fatal("GET /queue/healthz answered by an answer that was refused")
	}
}
