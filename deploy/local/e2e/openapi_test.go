package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/internal/testbin"
	"github.com/aditus-queue/aditus-queue/transport/api"
	"github.com/aditus-queue/aditus-queue/transport/api/apidoc"
)

const docAdminToken = "openapi-test-admin-token"

// TestOpenAPI holds the API document at /api/openapi.json true to what the
// binary answers: it is the embedded document, a valid OpenAPI 3.1 one
// whose schemas compile, and recorded answers of every documented
// operation are valid against its schemas. (That the router's routes and
// the document's operations are the same set is TestOpenAPIRoutes, at the
// root, which reads the router in its process.)
func TestOpenAPI(t *testing.T) {
	base := startDocServer(t, capacityProxyFlags(t)...)
	c := &docClient{t: t, base: base}
	st, h, body := c.raw("GET", "/api/openapi.json", "", nil)
	if st != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "application/json") || !bytes.Equal(body, api.OpenAPI) {
		t.Fatalf("GET /api/openapi.json: %d %s, want 200 application/json with the embedded document", st, h.Get("Content-Type"))
	}
	doc := apidoc.Load(t, body)
	c.doc = doc
	c.call(200, "GET", "/api/openapi.json", "", nil)

	t.Run("valid OpenAPI 3.1", func(t *testing.T) {
		if err := apidoc.ValidOpenAPI(body); err != nil {
			t.Error(err)
		}
	})
	t.Run("schemas compile", func(t *testing.T) {
		for _, err := range doc.CompileAll() {
			t.Error(err)
		}
	})
	t.Run("answers match the schemas", func(t *testing.T) {
		c.t = t
		driveAnswers(c)
		checkSecurity(c)
		if un := doc.Unanswered(); len(un) > 0 {
			t.Errorf("documented operations without a validated answer (drive them in driveAnswers):\n\t%s", strings.Join(un, "\n\t"))
		}
	})
}

// docClient sends requests and checks every answer against the document.
type docClient struct {
	t    *testing.T
	base string
	doc  *apidoc.Doc
}

// startDocServer runs `aditus-queue serve` with the embedded log in a
// temporary directory, the documents' admin token and health URLs on
// loopback allowed (the health-check test calls a server of this test),
// with the extra flags given, and returns its base URL.
func startDocServer(t *testing.T, extra ...string) string {
	t.Helper()
	args := append([]string{"--admin-token", docAdminToken, "--log-level", "warn", "--allow-private-health-urls"}, extra...)
	return startServer(t, t.TempDir(), testbin.FreeAddr(t), args...).base
}

// raw sends a request without checking it against the document.
func (c *docClient) raw(method, path, auth string, body any, hdr ...string) (int, http.Header, []byte) {
	c.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	hc := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return res.StatusCode, res.Header, b
}

// call sends a request, requires status want, validates the answer (and a
// JSON request body of a successful call) against the document, and
// decodes a JSON answer.
func (c *docClient) call(want int, method, path, auth string, body any, hdr ...string) map[string]any {
	c.t.Helper()
	st, h, b := c.raw(method, path, auth, body, hdr...)
	if st != want {
		c.t.Errorf("%s %s: status %d, want %d (%.300s)", method, path, st, want, b)
		return nil
	}
	p, _, _ := strings.Cut(path, "?")
	if err := c.doc.CheckAnswer(method, p, st, h, b); err != nil {
		c.t.Error(err)
	}
	if st < 300 && body != nil {
		if j, ok := body.(map[string]any); ok {
			raw, _ := json.Marshal(j)
			if err := c.doc.CheckRequest(method, p, raw); err != nil {
				c.t.Errorf("request body: %v", err)
			}
		}
	}
	var m map[string]any
	if strings.HasPrefix(h.Get("Content-Type"), "application/json") {
		_ = json.Unmarshal(b, &m)
	}
	return m
}
