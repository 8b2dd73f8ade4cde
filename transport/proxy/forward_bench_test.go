package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// BenchmarkForward sends one request at a time through each path to the
// upstream (no waiting room), over keep-alive connections at both ends:
// the allocations and time per request of the forwarding itself, client
// and upstream included on both sides; "direct" is client and upstream
// alone, to subtract.
func BenchmarkForward(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer up.Close()
	for _, fw := range []struct {
		name string
		fw   Forwarding
	}{{"direct", -1}, {"std", ForwardStd}, {"fast", ForwardFast}} {
		b.Run(fw.name, func(b *testing.B) {
			p := strings.TrimPrefix(up.URL, "http://")
			if fw.fw >= 0 {
				p = conformanceProxy(b, visitorServers[1], p, fw.fw, false, time.Minute)
			}
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
			req, _ := http.NewRequest("GET", "http://"+p+"/item?id=1", nil)
			req.Host = "shop.test"
			req.Header.Set("Cookie", "a=b")
			b.ReportAllocs()
			for b.Loop() {
				res, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					b.Fatalf("status %d", res.StatusCode)
				}
			}
		})
	}
}
