package api

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/labstack/echo/v4"
)

// A grain's busy (its write queue is full) is a 503 with Retry-After in the
// contract's JSON error, as the other codes a client retries are.
func TestBusyIsRetriable(t *testing.T) {
	s := &Server{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	e := echo.New()
	rec := httptest.NewRecorder()
	c := e.NewContext(httptest.NewRequest(http.MethodPost, "/queue/sale/bypass", nil), rec)
	c.SetPath("/queue/:slug/bypass")
	s.handleError(protocol.ErrBusy, c)
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if rec.Code != http.StatusServiceUnavailable || body["error"] != "busy" || body["message"] == "" || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("busy: got %d %v Retry-After %q, want 503 busy with a message and Retry-After", rec.Code, body, rec.Header().Get("Retry-After"))
	}
}

// The API document's 503 lists exactly the grain codes answered as 503.
// (UnavailableError, and maintenance in ClosedError).
func TestUnavailableCodesDocumented(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties struct {
					Error struct {
						Enum []string `json:"enum"`
					} `json:"error"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	documented := doc.Components.Schemas["UnavailableError"].Properties.Error.Enum
	// A room in maintenance answers 503 too, with the body of a closed room.
	if slices.Contains(doc.Components.Schemas["ClosedError"].Properties.Error.Enum, protocol.CodeMaintenance) {
		documented = append(documented, protocol.CodeMaintenance)
	}
	var mapped []string
	for code, status := range statusOf {
		if status == http.StatusServiceUnavailable {
			mapped = append(mapped, code)
		}
	}
	sort.Strings(mapped)
	sort.Strings(documented)
	if !slices.Equal(mapped, documented) || !slices.Contains(documented, protocol.CodeBusy) {
		t.Fatalf("503 codes: the document lists %v, the transport answers %v", documented, mapped)
	}
}
