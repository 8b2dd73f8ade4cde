package protocol

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// writtenAsPlain checks that v's JSON is byte for byte encoding/json's for
// plain, the same value in a type without v's methods, and returns it.
func writtenAsPlain(t *testing.T, v, plain any) []byte {
	t.Helper()
	got, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(plain)
	if !bytes.Equal(got, want) {
		t.Errorf("%T %+v: got %s, want %s", v, v, got, want)
	}
	return want
}

// The batch messages' hand-written JSON is byte for byte what encoding/json
// writes for the same types, and reads back what either wrote.
func TestBatchMessagesJSON(t *testing.T) {
	type plainReq JoinBatchRequest
	type plainRes JoinBatchResult
	reqs := []JoinBatchRequest{
		{Count: 1},
		{Count: 512, Known: true, Epoch: 3, Version: 77},
		{Count: 4096, Known: true, Epoch: -1, Version: math.MaxUint64},
	}
	for _, r := range reqs {
		want := writtenAsPlain(t, r, plainReq(r))
		var back JoinBatchRequest
		if err := json.Unmarshal(want, &back); err != nil || back != r {
			t.Errorf("request %s read back as %+v, %v", want, back, err)
		}
	}
	view := &room.View{ID: "r1", Epoch: 2, Version: 9, Issued: 40}
	results := []JoinBatchResult{
		{First: 1, Count: 1, Epoch: 1, Version: 1, Line: room.Line{Base: 5, T0: 1764800000000000000, Rate: 60}, Issued: 1},
		{First: 1 << 40, Count: 512, Epoch: 7, Version: 123, Line: room.Line{Base: 1234.5678901234, T0: -5, Rate: 0.1}, Issued: 1<<40 + 511},
		{First: 3, Count: 2, Line: room.Line{Base: 1e-9, Rate: 1e22}, Issued: 4},
		{First: 3, Count: 2, Line: room.Line{Base: 0.000001, Rate: 123456789012345678901.0}, Issued: 4},
		{First: 9, Count: 1, Epoch: 2, Version: 9, Issued: 9, View: view},
	}
	for _, r := range results {
		want := writtenAsPlain(t, r, plainRes(r))
		var back JoinBatchResult
		if err := json.Unmarshal(want, &back); err != nil {
			t.Fatal(err)
		}
		if back.View != nil {
			if r.View == nil || back.View.ID != r.View.ID || back.View.Issued != r.View.Issued {
				t.Errorf("view read back as %+v", back.View)
			}
			back.View = r.View
		}
		if back != r {
			t.Errorf("result %s read back as %+v", want, back)
		}
	}
	// What the reader does not expect goes to encoding/json.
	var r JoinBatchRequest
	if err := json.Unmarshal([]byte(` { "version" : 4, "count": 2 } `), &r); err != nil || r != (JoinBatchRequest{Count: 2, Version: 4}) {
		t.Errorf("spaced request: %+v %v", r, err)
	}
	for _, bad := range []string{`{"count":"x"}`, `{"count":-1}`, `{"count":1,}`, `[]`, `{"count":1`} {
		var r JoinBatchRequest
		if err := json.Unmarshal([]byte(bad), &r); err == nil {
			t.Errorf("%s: got %+v, want an error", bad, r)
		}
		if err := r.UnmarshalJSON([]byte(bad)); err == nil {
			t.Errorf("%s read directly: got %+v, want an error", bad, r)
		}
	}
}

// FuzzBatchMessages: on any input the batch messages' reader agrees with
// encoding/json (both refuse it, or both read the same value), and what it
// reads is written again as encoding/json writes it and read back the same.
func FuzzBatchMessages(f *testing.F) {
	for _, g := range goldenRequests {
		f.Add([]byte(g.wire))
	}
	for _, g := range goldenResults {
		f.Add([]byte(g.wire))
	}
	for _, s := range []string{`{"epoch":+1}`, `{"count":01}`, `{"count":1e2}`, `{"count":-0}`, `{"epoch":-0}`, `{"COUNT":1}`,
		`{"count":18446744073709551616}`, `{"epoch":-9223372036854775809}`, `{"line":{"base":.5}}`, `{"line":{"base":5.}}`,
		`{"line":{"base":Infinity}}`, `{"line":{"base":0x1p-2}}`, `{"line":{"base":1_0}}`, `{"line":{"base":1e400}}`,
		`{"line":{"base":1},"line":{"t0":2}}`, `{"line":{"base":1,}}`, `{"line":null}`, `{"count":1,"count":2}`, `{}`,
		`{"known":true,"known":false}`, `{"first":1,"view":{"id":"r"}}`, "{\"count\":1\n}", `{"co\u0075nt":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		type plainReq JoinBatchRequest
		type plainRes JoinBatchResult
		agree(t, b, func(p plainReq) JoinBatchRequest { return JoinBatchRequest(p) })
		agree(t, b, func(p plainRes) JoinBatchResult { return JoinBatchResult(p) })
	})
}

// agree reads b into a T with T's reader and into a P, T's fields without
// its methods, with encoding/json; it checks that both refuse b or both
// read the same value (conv turns a P into a T), and that what was read is
// written as encoding/json writes it and read back the same.
func agree[T, P any, PT interface {
	*T
	json.Unmarshaler
}](t *testing.T, b []byte, conv func(P) T) {
	t.Helper()
	var v T
	var p P
	want, got := json.Unmarshal(b, &p), PT(&v).UnmarshalJSON(b)
	if (want == nil) != (got == nil) {
		t.Fatalf("%q: encoding/json says %v, the reader %v", b, want, got)
	}
	if want != nil {
		return
	}
	if !reflect.DeepEqual(v, conv(p)) {
		t.Fatalf("%q: encoding/json reads %+v, the reader %+v", b, conv(p), v)
	}
	w, err := json.Marshal(v)
	wantW, wantErr := json.Marshal(p)
	if (err == nil) != (wantErr == nil) || !bytes.Equal(w, wantW) {
		t.Fatalf("%+v written as %s (%v), encoding/json writes %s (%v)", v, w, err, wantW, wantErr)
	}
	if err != nil {
		return
	}
	var back T
	if err := PT(&back).UnmarshalJSON(w); err != nil || !reflect.DeepEqual(back, v) {
		t.Fatalf("%s read back as %+v (%v), want %+v", w, back, err, v)
	}
}

// Front and grain read a batch message without allocating and write it in
// one allocation, the bytes encoding/json writes, refuse what encoding/json
// refuses, and send every other body through encoding/json.
func TestCallBodies(t *testing.T) {
	req, res := goldenRequests[3], goldenResults[1]
	reqWire, resWire := []byte(req.wire), []byte(res.wire)
	var r JoinBatchRequest
	var s JoinBatchResult
	read := testing.AllocsPerRun(100, func() {
		if Unmarshal(reqWire, &r) != nil || Unmarshal(resWire, &s) != nil {
			t.Fatal("a batch message refused")
		}
	})
	if read != 0 || r != req.v || s != res.v {
		t.Errorf("read %+v and %+v in %v allocations, want %+v and %+v in none", r, s, read, req.v, res.v)
	}
	var b []byte
	var v any = req.v // the front's call holds it as any already
	written := testing.AllocsPerRun(100, func() { b, _ = Marshal(v) })
	if written != 1 || string(b) != req.wire {
		t.Errorf("written as %s in %v allocations, want %s in one", b, written, req.wire)
	}
	if err := Unmarshal([]byte(`{"count":+1}`), &r); err == nil {
		t.Errorf(`{"count":+1} read as %+v, want the error encoding/json gives`, r)
	}
	a := AdminRequest{Actor: "ops", Name: "n", Disable: true}
	want, _ := json.Marshal(a)
	var back AdminRequest
	if got, err := Marshal(a); err != nil || !bytes.Equal(got, want) || Unmarshal(want, &back) != nil || back.Actor != "ops" || !back.Disable {
		t.Errorf("admin request written as %s (%v), read back as %+v; want %s", got, err, back, want)
	}
}
