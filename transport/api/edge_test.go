package api

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
)

// Every request passes one middleware: a handler's panic is answered 500
// internal in the contract's shape and counted, a body over 64 KiB is
// refused 413 too_large whether or not its length was announced, and a
// body within the bound reaches the handler whole.
func TestEdgeMiddleware(t *testing.T) {
	var reg *prometheus.Registry
	e := newEnvWith(t, func(_ *grain.Deps, cfg *Config) {
		reg = cfg.Registry
		cfg.Extra = append(cfg.Extra, func(e *echo.Echo) {
			e.GET("/test/panic", func(echo.Context) error { panic("boom") })
			e.POST("/test/echo", func(c echo.Context) error {
				b, err := io.ReadAll(c.Request().Body)
				if err != nil {
					return err
				}
				return c.String(http.StatusOK, strings.TrimSpace(string(b[:min(len(b), 10)])))
			})
		})
	})
	if st, m, _ := e.do("GET", "/test/panic", "", nil); st != http.StatusInternalServerError || m["error"] != "internal" {
		t.Fatalf("panic: %d %v, want 500 internal", st, m)
	}
	post := func(body io.Reader, length int64) (int, string) {
		t.Helper()
		req, err := http.NewRequest("POST", e.srv.URL+"/test/echo", body)
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = length // -1: chunked, no length announced
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	big := strings.Repeat("a", maxBody+1)
	if st, body := post(io.MultiReader(strings.NewReader(big)), -1); st != http.StatusRequestEntityTooLarge || !strings.Contains(body, `"too_large"`) {
		t.Fatalf("chunked body over the bound: %d %s", st, body)
	}
	if st, body := post(strings.NewReader(big), int64(len(big))); st != http.StatusRequestEntityTooLarge || !strings.Contains(body, `"too_large"`) {
		t.Fatalf("announced body over the bound: %d %s", st, body)
	}
	if st, body := post(io.MultiReader(strings.NewReader(big[:maxBody])), -1); st != http.StatusOK || body != "aaaaaaaaaa" {
		t.Fatalf("body at the bound: %d %s", st, body)
	}
	m := metricsOf(reg)
	for _, want := range []string{
		`aditus_queue_http_requests_total{method="GET",route="/test/panic",status="500"} 1`,
		`aditus_queue_http_requests_total{method="POST",route="/test/echo",status="413"} 2`,
		`aditus_queue_http_requests_total{method="POST",route="/test/echo",status="200"} 1`,
	} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(want) + `$`).Match(m) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
