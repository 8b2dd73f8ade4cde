package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// framingRow is one request (or several on one connection) sent as raw
// bytes to the proxy, and what must come of it.
type framingRow struct {
	name string
	req  string
	// open: the proxy keeps the connection open after the row's answers
	// (a sentinel request then ends it); otherwise it closes it.
	open bool
	// want are the statuses the visitor gets, 1xx left out.
	want []int
	// fwd are the requests the upstream must see whole, "METHOD path
	// body" (a request whose body fails may reach it cut, which the
	// oracle checks).
	fwd []string
	// absent are headers the upstream must not see.
	absent []string
}

const (
	host = "Host: shop.test\r\n"
	// wait is the waiting page of the full room.
	wait = http.StatusServiceUnavailable
)

// chunk is s as one chunk of a chunked body.
func chunk(s string) string { return fmt.Sprintf("%x\r\n%s\r\n", len(s), s) }

// smuggled is the request that, hidden in a body, would pass the full
// room if the upstream read it as a request of its own.
const smuggled = "GET /checkout HTTP/1.1\r\n" + host + "\r\n"

// inside is a request hidden in the body of one the full room holds.
const inside = "GET /inside HTTP/1.1\r\n" + host + "\r\n"

func refused(name, req string, status int) framingRow {
	return framingRow{name: name, req: req, want: []int{status}}
}

var framingRows = []framingRow{
	{name: "plain GET", req: "GET /a?b=c HTTP/1.1\r\n" + host + "\r\n", open: true,
		want: []int{200}, fwd: []string{"GET /a?b=c 0"}},
	{name: "the full room waits", req: smuggled, open: true, want: []int{wait}},
	{name: "Content-Length body", req: "POST / HTTP/1.1\r\n" + host + "Content-Length: 5\r\n\r\nhello", open: true,
		want: []int{200}, fwd: []string{"POST / 5"}},
	{name: "GET with a body", req: "GET / HTTP/1.1\r\n" + host + "Content-Length: 3\r\n\r\nabc", open: true,
		want: []int{200}, fwd: []string{"GET / 3"}},
	{name: "chunked body", req: "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n" +
		chunk("hello") + chunk(" world") + "0\r\n\r\n", want: []int{200}, fwd: []string{"POST / 11"}},

	// CL.TE: the front end would take Content-Length, the upstream chunked.
	{name: "CL.TE", req: "POST / HTTP/1.1\r\n" + host + fmt.Sprintf("Content-Length: %d\r\n", 5+len(smuggled)) +
		"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled,
		want: []int{200}, fwd: []string{"POST / 0"}},
	// TE.CL: the front end would take chunked, the upstream Content-Length.
	{name: "TE.CL", req: "POST / HTTP/1.1\r\n" + host + "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n" +
		chunk(smuggled) + "0\r\n\r\n",
		want: []int{200}, fwd: []string{fmt.Sprintf("POST / %d", len(smuggled))}},
	{name: "TE.CL, Content-Length after", req: "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n" +
		chunk(smuggled) + "0\r\n\r\n",
		want: []int{200}, fwd: []string{fmt.Sprintf("POST / %d", len(smuggled))}},

	{name: "CL.TE at the full room", req: "POST /checkout HTTP/1.1\r\n" + host + fmt.Sprintf("Content-Length: %d\r\n", 5+len(inside)) +
		"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + inside, want: []int{wait}},
	// The waiting page answers without reading the body: the server
	// skips it (up to 256 KB, else it closes), never reads it as requests.
	{name: "unread body at the full room", req: "POST /checkout HTTP/1.1\r\n" + host + fmt.Sprintf("Content-Length: %d\r\n\r\n", len(inside)) +
		inside, open: true, want: []int{wait}},
	{name: "large unread body at the full room", req: "POST /checkout HTTP/1.1\r\n" + host + fmt.Sprintf("Content-Length: %d\r\n\r\n", 300000+len(inside)) +
		strings.Repeat("x", 300000) + inside, want: []int{wait}},

	// TE.TE: obfuscated Transfer-Encoding one side would ignore.
	{name: "TE case", req: "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: ChUnKeD\r\n\r\n" + chunk("abc") + "0\r\n\r\n",
		want: []int{200}, fwd: []string{"POST / 3"}},
	{name: "TE surrounded by blanks", req: "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: \t chunked \t\r\n\r\n" + chunk("abc") + "0\r\n\r\n",
		want: []int{200}, fwd: []string{"POST / 3"}},
	refused("TE chunked, identity", "POST / HTTP/1.1\r\n"+host+"Transfer-Encoding: chunked, identity\r\nContent-Length: 5\r\n\r\n0\r\n\r\n", 501),
	refused("TE identity, chunked", "POST / HTTP/1.1\r\n"+host+"Transfer-Encoding: identity, chunked\r\n\r\n0\r\n\r\n", 501),
	refused("TE xchunked", "POST / HTTP/1.1\r\n"+host+"Transfer-Encoding: xchunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n", 501),
	refused("TE twice", "POST / HTTP/1.1\r\n"+host+"Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n0\r\n\r\n", 501),
	refused("TE chunked twice", "POST / HTTP/1.1\r\n"+host+"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 501),
	refused("TE space before the colon", "POST / HTTP/1.1\r\n"+host+"Transfer-Encoding : chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n", 400),
	refused("TE tab before the colon", "POST / HTTP/1.1\r\n"+host+"Transfer-Encoding\t: chunked\r\n\r\n0\r\n\r\n", 400),
	refused("TE vertical tab", "POST / HTTP/1.1\r\n"+host+"Transfer-Encoding:\x0bchunked\r\n\r\n0\r\n\r\n", 400),
	// net/http joins a folded line to the one before it.
	refused("TE folded", "POST / HTTP/1.1\r\n"+host+"Transfer-Encoding: identity\r\n chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n", 501),
	{name: "folded header", req: "GET /fold HTTP/1.1\r\n" + host + "X-A: one\r\n two\r\n\r\n", open: true,
		want: []int{200}, fwd: []string{"GET /fold 0"}},
	refused("folded header first", "POST / HTTP/1.1\r\n Transfer-Encoding: chunked\r\n"+host+"\r\n0\r\n\r\n", 400),
	{name: "TE with an underscore", req: "POST / HTTP/1.1\r\n" + host + "Transfer_Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n",
		open: true, want: []int{200}, fwd: []string{"POST / 5"}, absent: []string{"Transfer_encoding"}},
	{name: "Content-Length with an underscore", req: "POST / HTTP/1.1\r\n" + host + "Content_Length: 40\r\nContent-Length: 5\r\n\r\nhello",
		open: true, want: []int{200}, fwd: []string{"POST / 5"}, absent: []string{"Content_length"}},

	// Content-Length.
	refused("two Content-Lengths", "POST / HTTP/1.1\r\n"+host+"Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!", 400),
	{name: "the same Content-Length twice", req: "POST / HTTP/1.1\r\n" + host + "Content-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
		open: true, want: []int{200}, fwd: []string{"POST / 5"}},
	refused("Content-Length list", "POST / HTTP/1.1\r\n"+host+"Content-Length: 5, 5\r\n\r\nhello", 400),
	refused("Content-Length +", "POST / HTTP/1.1\r\n"+host+"Content-Length: +5\r\n\r\nhello", 400),
	refused("Content-Length -", "POST / HTTP/1.1\r\n"+host+"Content-Length: -5\r\n\r\nhello", 400),
	refused("Content-Length hex", "POST / HTTP/1.1\r\n"+host+"Content-Length: 0x5\r\n\r\nhello", 400),
	refused("Content-Length word", "POST / HTTP/1.1\r\n"+host+"Content-Length: five\r\n\r\nhello", 400),
	refused("Content-Length empty", "POST / HTTP/1.1\r\n"+host+"Content-Length: \r\n\r\nhello", 400),
	refused("Content-Length overflow", "POST / HTTP/1.1\r\n"+host+"Content-Length: 99999999999999999999\r\n\r\nhello", 400),

	// Chunk sizes.
	{name: "chunk extensions", req: "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n" +
		"5;name=value\r\nhello\r\n0;last\r\n\r\n", want: []int{200}, fwd: []string{"POST / 5"}},
	{name: "chunk sizes with leading zeros", req: "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n" +
		"0005\r\nhello\r\n000\r\n\r\n", want: []int{200}, fwd: []string{"POST / 5"}},
	{name: "chunked with a trailer", req: "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n" +
		chunk("hello") + "0\r\nX-Sum: 1\r\n\r\n", want: []int{200}, fwd: []string{"POST / 5"}},
	refused("chunk size overflow", "POST / HTTP/1.1\r\n"+host+"Transfer-Encoding: chunked\r\n\r\n"+
		"10000000000000005\r\nhello\r\n0\r\n\r\n", 400),
	refused("chunk size not hex", "POST / HTTP/1.1\r\n"+host+"Transfer-Encoding: chunked\r\n\r\n"+
		"5g\r\nhello\r\n0\r\n\r\n", 400),
	refused("chunk longer than its size", "POST / HTTP/1.1\r\n"+host+"Transfer-Encoding: chunked\r\n\r\n"+
		"3\r\nhello\r\n0\r\n\r\n", 400),

	// Line endings and control characters.
	{name: "bare LF", req: "GET /lf HTTP/1.1\n" + "Host: shop.test\n\n", open: true, want: []int{200}, fwd: []string{"GET /lf 0"}},
	{name: "bare LF blank line after CRLF lines", req: "GET /lf HTTP/1.1\r\n" + host + "\n", open: true, want: []int{200}, fwd: []string{"GET /lf 0"}},
	{name: "CRLF blank line after a bare LF", req: "GET /lf HTTP/1.1\r\nHost: shop.test\n\r\n", open: true, want: []int{200}, fwd: []string{"GET /lf 0"}},
	{name: "bare LF lines ended by CRLFCRLF", req: "GET /lf HTTP/1.1\nX-A: 1\r\n" + host + "\r\n", open: true, want: []int{200}, fwd: []string{"GET /lf 0"}},
	refused("blank lines before the request line", "\r\n\nGET /lf HTTP/1.1\r\n"+host+"\r\n", 400),
	// Bare LFs in a body are the body's: never read as a header block.
	{name: "bare LFs in a body", req: "POST /lf HTTP/1.1\r\n" + host + "Content-Length: 4\r\n\r\n\n\n\r\n" +
		"GET /after HTTP/1.1\r\n" + host + "\r\n", open: true, want: []int{200, 200}, fwd: []string{"POST /lf 4", "GET /after 0"}},
	{name: "bare LFs in a body after 100 Continue", req: "POST /lf HTTP/1.1\r\n" + host + "Expect: 100-continue\r\nContent-Length: 3\r\n\r\n\n\n\n",
		open: true, want: []int{200}, fwd: []string{"POST /lf 3"}},
	refused("bare CR in the request line", "GET / HTTP/1.1\rHost: shop.test\r\n\r\n", 400),
	refused("bare CR in a value", "GET / HTTP/1.1\r\n"+host+"X-A: a\rb\r\n\r\n", 400),
	refused("bare CR ending a header", "GET / HTTP/1.1\r\n"+host+"X-A: a\r\r\n\r\n", 400),
	refused("NUL in a name", "GET / HTTP/1.1\r\n"+host+"X-\x00A: 1\r\n\r\n", 400),
	refused("NUL in a value", "GET / HTTP/1.1\r\n"+host+"X-A: a\x00b\r\n\r\n", 400),
	refused("control character in a value", "GET / HTTP/1.1\r\n"+host+"X-A: a\x01b\r\n\r\n", 400),
	refused("DEL in a value", "GET / HTTP/1.1\r\n"+host+"X-A: a\x7fb\r\n\r\n", 400),
	refused("control character in a name", "GET / HTTP/1.1\r\n"+host+"X-\x01: 1\r\n\r\n", 400),
	refused("header name with a space", "GET / HTTP/1.1\r\n"+host+"X Y: 1\r\n\r\n", 400),
	refused("header without a colon", "GET / HTTP/1.1\r\n"+host+"X-Y\r\n\r\n", 400),

	// HTTP/1.0 with Transfer-Encoding: the framing is faulty (RFC 9112
	// section 6.1): Content-Length alone counts, then the connection ends.
	{name: "HTTP/1.0 with TE and Content-Length", req: "POST / HTTP/1.0\r\n" + host +
		"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\nhello", want: []int{200}, fwd: []string{"POST / 5"}},
	{name: "HTTP/1.0 keep-alive with TE", req: "POST / HTTP/1.0\r\n" + host + "Connection: keep-alive\r\n" +
		"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\nhello", want: []int{200}, fwd: []string{"POST / 5"}},

	// Expect: 100-continue with the body and a second request sent at once.
	{name: "Expect then a second request", req: "POST / HTTP/1.1\r\n" + host + "Expect: 100-continue\r\nContent-Length: 5\r\n\r\nhello" + smuggled,
		open: true, want: []int{200, wait}, fwd: []string{"POST / 5"}},
	{name: "Expect at the full room then a second request", req: "POST /checkout HTTP/1.1\r\n" + host +
		"Expect: 100-continue\r\nContent-Length: 31\r\n\r\n" + "GET / HTTP/1.1\r\nHost: shop.test\r\n\r\n",
		want: []int{wait}},

	{name: "pipelined", req: "GET /one HTTP/1.1\r\n" + host + "\r\n" + smuggled +
		"POST /two HTTP/1.1\r\n" + host + "Content-Length: 2\r\n\r\nhi", open: true,
		want: []int{200, wait, 200}, fwd: []string{"GET /one 0", "POST /two 2"}},

	// Oversize request lines and headers (net/http's limit is 1 MB).
	refused("oversize request line", "GET /"+strings.Repeat("a", 1<<20+8192)+" HTTP/1.1\r\n"+host+"\r\n", 431),
	refused("oversize header", "GET / HTTP/1.1\r\n"+host+"X-Big: "+strings.Repeat("b", 1<<20+8192)+"\r\n\r\n", 431),
	refused("oversize header block", "GET / HTTP/1.1\r\n"+host+strings.Repeat("X-Many: "+strings.Repeat("m", 1000)+"\r\n", 1100)+"\r\n", 431),
	{name: "large header under the limit", req: "GET /big HTTP/1.1\r\n" + host + "X-Big: " + strings.Repeat("b", 100<<10) + "\r\n\r\n",
		open: true, want: []int{200}, fwd: []string{"GET /big 0"}},

	// Request lines.
	refused("two spaces before the target", "GET  / HTTP/1.1\r\n"+host+"\r\n", 400),
	refused("two spaces after the target", "GET /  HTTP/1.1\r\n"+host+"\r\n", 400),
	refused("tab after the method", "GET\t/ HTTP/1.1\r\n"+host+"\r\n", 400),
	refused("tab after the target", "GET /\tHTTP/1.1\r\n"+host+"\r\n", 400),
	refused("space at the end", "GET / HTTP/1.1 \r\n"+host+"\r\n", 400),
	refused("HTTP/2.0 in text", "GET / HTTP/2.0\r\n"+host+"\r\n", 505),
	refused("no Host", "GET / HTTP/1.1\r\n\r\n", 400),
	refused("two Hosts", "GET / HTTP/1.1\r\n"+host+"Host: other.test\r\n\r\n", 400),

	// Targets.
	{name: "absolute-form", req: "GET http://shop.test/abs?x=1 HTTP/1.1\r\n" + host + "\r\n", open: true,
		want: []int{200}, fwd: []string{"GET /abs?x=1 0"}},
	{name: "absolute-form to the full room", req: "GET http://shop.test/checkout HTTP/1.1\r\nHost: other.test\r\n\r\n", open: true,
		want: []int{wait}},
	{name: "absolute-form over another Host", req: "GET http://shop.test/abs HTTP/1.1\r\nHost: other.test\r\n\r\n", open: true,
		want: []int{200}, fwd: []string{"GET /abs 0"}},
	{name: "absolute-form names the host", req: "GET http://other.test/ HTTP/1.1\r\n" + host + "\r\n", open: true,
		want: []int{404}},
	{name: "Host port not a number", req: "GET /hostport HTTP/1.1\r\nHost: shop.test:A\r\n\r\n", open: true, want: []int{400}},
	{name: "asterisk-form OPTIONS", req: "OPTIONS * HTTP/1.1\r\n" + host + "\r\n", open: true, want: []int{200}},
	// A target with no canonical path is refused before any site is chosen.
	{name: "asterisk-form GET", req: "GET * HTTP/1.1\r\n" + host + "\r\n", open: true, want: []int{400}},

	// Hop-by-hop headers, the ones Connection names included.
	{name: "hop-by-hop headers", req: "GET /hop HTTP/1.1\r\n" + host + "Connection: keep-alive, X-Secret\r\nX-Secret: 1\r\n" +
		"Keep-Alive: timeout=5\r\nProxy-Connection: keep-alive\r\nTE: gzip\r\nProxy-Authorization: Basic eDp5\r\nUpgrade: h2c\r\nTrailer: X-T\r\n\r\n",
		open: true, want: []int{200}, fwd: []string{"GET /hop 0"}, absent: []string{"X-Secret", "Trailer"}},

	// Protocol upgrades: only WebSocket's is passed on; an h2c upgrade
	// would make the connection a tunnel to the upstream past the gate.
	{name: "h2c upgrade", req: "GET /up HTTP/1.1\r\n" + host + "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n" +
		"HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n", open: true, want: []int{200}, fwd: []string{"GET /up 0"},
		absent: []string{"Http2-Settings"}},
	{name: "CONNECT", req: "CONNECT shop.test:443 HTTP/1.1\r\n" + host + "\r\n", open: true, want: []int{400}},
}

// TestFramingTable sends each row over a raw connection to a real proxy,
// on every visitor server and both upstream clients, and checks the
// answers and, by the oracle, what the upstream saw.
func TestFramingTable(t *testing.T) {
	for _, vs := range visitorServers {
		for _, uc := range upstreamClients {
			t.Run(vs.name+"/"+uc.name, func(t *testing.T) {
				for _, row := range framingRows {
					t.Run(row.name, func(t *testing.T) { runFramingRow(t, vs, uc.fw, row) })
				}
			})
		}
	}
}

// fastDiffers are the rows fasthttp's server answers otherwise than the
// standard one, each more strictly or as safely: it refuses what the
// standard server reads (a repeated Content-Length, bare LF line endings,
// Transfer-Encoding on HTTP/1.0, a Host port that is not a number, the
// asterisk-form target of a GET) and closes the connection, at once
// (FastListener); it skips blank lines before a request line, as RFC 9112
// section 2.2 allows, where the standard server refuses them; it reads a
// body of up to 1 MB whole before the gate, so a body the waiting page leaves unread is read as a body, never
// as requests, and the connection stays open (the sentinel proves the
// request hidden in it never reached the upstream).
var fastDiffers = map[string]framingRow{
	"the same Content-Length twice":                 {want: []int{400}},
	"bare LF":                                       {want: []int{400}},
	"bare LF blank line after CRLF lines":           {want: []int{400}},
	"CRLF blank line after a bare LF":               {want: []int{400}},
	"blank lines before the request line":           {want: []int{200}, fwd: []string{"GET /lf 0"}, open: true},
	"HTTP/1.0 with TE and Content-Length":           {want: []int{501}},
	"HTTP/1.0 keep-alive with TE":                   {want: []int{501}},
	"Host port not a number":                        {want: []int{400}},
	"asterisk-form GET":                             {want: []int{400}},
	"large unread body at the full room":            {want: []int{wait}, open: true},
	"Expect at the full room then a second request": {want: []int{wait}, open: true},
}

func runFramingRow(t *testing.T, vs visitorServer, fw Forwarding, row framingRow) {
	if d, ok := fastDiffers[row.name]; ok && vs.name == "fasthttp" {
		row.want, row.fwd, row.open = d.want, d.fwd, d.open
	}
	rig := newFramingRig(t, vs, fw)
	want, fwd := row.want, row.fwd
	if row.open {
		want = append(slices.Clone(want), 200)
		fwd = append(slices.Clone(fwd), "GET /sentinel 0")
	}
	statuses, err := rig.send(t, []byte(row.req), len(row.want))
	rig.finish(t)
	seen := slices.DeleteFunc(rig.check(t), func(s string) bool { return strings.HasSuffix(s, " -1") })
	if err != nil {
		t.Errorf("reading the answers: %v", err)
	}
	if !slices.Equal(statuses, want) {
		t.Errorf("answers %v, want %v (then the sentinel's 200 if the connection stays open)", statuses, row.want)
	}
	if !slices.Equal(seen, fwd) {
		t.Errorf("the upstream saw %q, want %q", seen, fwd)
	}
	if vs.name == "fasthttp" && fw == ForwardFast && row.name == "plain GET" && rig.fast != 2 {
		t.Errorf("the fast visitor server forwarded %d of the row's GET and the sentinel itself, want both", rig.fast)
	}
	for _, u := range rig.up.requests() {
		for _, h := range row.absent {
			if _, ok := u.header[h]; ok {
				t.Errorf("the upstream saw %s in %s", h, u)
			}
		}
	}
}

// errorsOf collects a check's failures instead of failing the test.
type errorsOf struct {
	testing.TB
	errs []string
}

func (e *errorsOf) Errorf(format string, args ...any) {
	e.errs = append(e.errs, fmt.Sprintf(format, args...))
}

// TestFramingOracleSeesSmuggling puts a naive forwarder, which passes the
// body on after a Content-Length of 0 as some proxies pass on a framing
// they did not use, where the proxy's clients are, and checks that the
// oracle sees the request smuggled in the body for what it is.
func TestFramingOracleSeesSmuggling(t *testing.T) {
	rig := newFramingRig(t, visitorServers[0], ForwardStd)
	naive := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := net.Dial("tcp", rig.up.ln.Addr().String())
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\n\r\n%s", r.Method, r.RequestURI, r.Host, body)
		res, err := http.ReadResponse(bufio.NewReader(c), r)
		if err != nil {
			t.Error(err)
			return
		}
		w.WriteHeader(res.StatusCode)
	})
	for _, routes := range rig.h.hosts {
		for _, rt := range routes {
			rt.next = rig.record(naive)
		}
	}
	req := "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n" + chunk(smuggled) + "0\r\n\r\n"
	if statuses, err := rig.send(t, []byte(req), 1); err != nil || !slices.Equal(statuses, []int{200}) {
		t.Fatalf("answers %v, %v", statuses, err)
	}
	rig.finish(t)
	e := &errorsOf{TB: t}
	seen := rig.check(e)
	if want := []string{"POST / 0", "GET /checkout 0"}; !slices.Equal(seen, want) {
		t.Fatalf("the upstream saw %q, want %q", seen, want)
	}
	// The POST's body length differs, and the smuggled GET is no request
	// of the gate's.
	if !slices.ContainsFunc(e.errs, func(s string) bool {
		return strings.Contains(s, `"GET /checkout 0", which the gate never decided`)
	}) || len(e.errs) != 3 {
		t.Fatalf("the oracle said %q", e.errs)
	}
}
