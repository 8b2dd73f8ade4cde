package grain

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/persistence"
)

// fakeWrites is a write pipeline whose writes are started by the test:
// every write the pipeline starts is recorded, and the test finishes it with
// the outcome it chooses.
type fakeWrites struct {
	t       *testing.T
	p       *writePipeline
	started []startedWrite
	applied []int64
	// answers are the tasks' outcomes, by kind ("" until answered).
	answers map[string]string
	decided []string
}

type startedWrite struct {
	t    *task
	from int64
	data [][]byte
}

func newFakeWrites(t *testing.T) *fakeWrites {
	f := &fakeWrites{t: t, answers: map[string]string{}}
	f.p = &writePipeline{j: journal{epoch: 10, verified: 10}, now: func() int64 { return 1 }}
	f.p.start = func(t *task, from int64, data [][]byte) {
		f.started = append(f.started, startedWrite{t, from, data})
	}
	return f
}

// task returns a task of kind that writes one reservation event, or fails
// its decision with err.
func (f *fakeWrites) task(kind string, err error) *task {
	return &task{kind: kind, decide: func(now int64) ([]room.Event, error) {
		f.decided = append(f.decided, kind)
		if err != nil {
			return nil, err
		}
		return []room.Event{{Type: room.TypeReserved, Epoch: 10, At: now, Reserved: &room.Reserved{UpTo: 100}}}, nil
	}, done: func(err error) {
		if err != nil {
			f.answers[kind] = err.Error()
		} else {
			f.answers[kind] = "ok"
		}
	}}
}

// finish ends the write in flight with the records at offsets (last the
// last of them).
func (f *fakeWrites) finish(res appended) (int, error) {
	f.t.Helper()
	if len(f.started) == 0 {
		f.t.Fatal("no write in flight")
	}
	w := f.started[len(f.started)-1]
	return f.p.finish(res, w.t, func(off int64, _ []byte) { f.applied = append(f.applied, off) })
}

func (f *fakeWrites) kinds() []string {
	var out []string
	for _, w := range f.started {
		out = append(out, w.t.kind)
	}
	return out
}

func records(offsets ...int64) appended {
	res := appended{last: offsets[len(offsets)-1]}
	for _, o := range offsets {
		res.records = append(res.records, persistence.Record{Offset: o, Data: []byte(fmt.Sprintf(`{"type":"reserved","n":%d}`, o))})
	}
	return res
}

// Writes go one at a time, in order; each decides only when its turn comes
// and reads back from where the previous one left off.
func TestWritePipelineInOrder(t *testing.T) {
	f := newFakeWrites(t)
	for _, k := range []string{"a", "b", "c"} {
		if err := f.p.submit(f.task(k, nil)); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(f.kinds(), []string{"a"}) || !slices.Equal(f.decided, []string{"a"}) || !f.p.busy() {
		t.Fatalf("after three submits: started %v, decided %v", f.kinds(), f.decided)
	}
	if w := f.started[0]; w.from != 10 || len(w.data) != 1 {
		t.Fatalf("first write from %d with %d records, want from 10 with 1", w.from, len(w.data))
	}
	n, err := f.finish(records(11, 12))
	if err != nil || n != 2 || !slices.Equal(f.applied, []int64{11, 12}) || f.answers["a"] != "ok" {
		t.Fatalf("finish a: %d %v applied %v answer %q", n, err, f.applied, f.answers["a"])
	}
	if !slices.Equal(f.kinds(), []string{"a", "b"}) || f.started[1].from != 12 || f.answers["b"] != "" {
		t.Fatalf("after a: started %v, b from %d", f.kinds(), f.started[1].from)
	}
	f.finish(records(13))
	f.finish(records(14))
	if f.p.busy() || f.answers["c"] != "ok" || f.p.j.verified != 14 {
		t.Fatalf("after all: busy %v, c %q, verified %d", f.p.busy(), f.answers["c"], f.p.j.verified)
	}
}

// A reservation goes ahead of every queued write; a write whose decision
// fails is answered without writing and the next one starts.
func TestWritePipelineFirstAndRefusals(t *testing.T) {
	f := newFakeWrites(t)
	f.p.submit(f.task("a", nil))
	f.p.submit(f.task("refused", room.ErrNotFound))
	f.p.submit(f.task("c", nil))
	f.p.first(f.task("reserve", nil))
	f.finish(records(11))
	if !slices.Equal(f.kinds(), []string{"a", "reserve"}) {
		t.Fatalf("after a: started %v, want the reservation next", f.kinds())
	}
	f.finish(records(12))
	if !slices.Equal(f.kinds(), []string{"a", "reserve", "c"}) || f.answers["refused"] != room.ErrNotFound.Error() {
		t.Fatalf("after the reservation: started %v, refused answered %q", f.kinds(), f.answers["refused"])
	}
}

// A failed write answers its task ErrLogUnavailable, applies nothing,
// keeps the verified offset, and the next write starts.
func TestWritePipelineWriteFails(t *testing.T) {
	f := newFakeWrites(t)
	f.p.submit(f.task("a", nil))
	f.p.submit(f.task("b", nil))
	_, err := f.finish(appended{err: errors.New("broker down")})
	if !errors.Is(err, protocol.ErrLogUnavailable) || f.answers["a"] == "" || f.answers["a"] == "ok" || len(f.applied) != 0 {
		t.Fatalf("failed write: %v, answer %q, applied %v", err, f.answers["a"], f.applied)
	}
	if !slices.Equal(f.kinds(), []string{"a", "b"}) || f.started[1].from != 10 {
		t.Fatalf("after the failure: started %v, b from %d", f.kinds(), f.started[1].from)
	}
}

// A newer activation's marker in the read-back stops the pipeline: what
// stands before it is applied, nothing from it on, the write in flight and
// every queued one are answered ErrSuperseded, and no write starts again.
func TestWritePipelineSuperseded(t *testing.T) {
	f := newFakeWrites(t)
	f.p.submit(f.task("a", nil))
	f.p.submit(f.task("b", nil))
	res := records(11)
	res.records = append(res.records, persistence.Record{Offset: 12, Data: []byte(`{"v":1,"type":"activated"}`)},
		persistence.Record{Offset: 13, Data: []byte(`{"type":"reserved"}`)})
	res.last = 13
	if _, err := f.finish(res); !errors.Is(err, protocol.ErrSuperseded) {
		t.Fatalf("finish: %v, want protocol.ErrSuperseded", err)
	}
	if !slices.Equal(f.applied, []int64{11}) || f.answers["a"] != protocol.ErrSuperseded.Error() || len(f.started) != 1 {
		t.Fatalf("applied %v, a %q, started %v", f.applied, f.answers["a"], f.kinds())
	}
	f.p.stop(protocol.ErrSuperseded)
	if err := f.p.submit(f.task("late", nil)); !errors.Is(err, protocol.ErrSuperseded) {
		t.Fatalf("submit after stop: %v, want protocol.ErrSuperseded", err)
	}
	f.p.add(f.task("checkpoint", nil))
	if f.answers["b"] != protocol.ErrSuperseded.Error() || f.answers["checkpoint"] != protocol.ErrSuperseded.Error() ||
		len(f.started) != 1 || f.p.j.verified != 10 {
		t.Fatalf("after stop: b %q, checkpoint %q, started %v, verified %d", f.answers["b"], f.answers["checkpoint"], f.kinds(), f.p.j.verified)
	}
}

// Beyond its bound the queue refuses callers' writes with ErrBusy, leaving
// them unanswered by the pipeline, while the grain's own writes still go in;
// once the queue drains callers are taken again, and every write taken is
// answered.
func TestWritePipelineBound(t *testing.T) {
	f := newFakeWrites(t)
	f.p.limit = 2
	for _, k := range []string{"a", "b", "c"} { // a in flight, b and c queued
		if err := f.p.submit(f.task(k, nil)); err != nil {
			t.Fatalf("submit %s: %v", k, err)
		}
	}
	if !f.p.full() {
		t.Fatal("not full with two queued under a bound of two")
	}
	if err := f.p.submit(f.task("d", nil)); !errors.Is(err, protocol.ErrBusy) || f.answers["d"] != "" {
		t.Fatalf("submit beyond the bound: %v, answered %q; want protocol.ErrBusy, unanswered", err, f.answers["d"])
	}
	f.p.add(f.task("checkpoint", nil))
	f.p.first(f.task("reserve", nil))
	for off := int64(11); len(f.started) < 5 || f.p.writing; off++ {
		f.finish(records(off))
	}
	if got, want := f.kinds(), []string{"a", "reserve", "b", "c", "checkpoint"}; !slices.Equal(got, want) {
		t.Fatalf("writes %v, want %v", got, want)
	}
	for _, k := range []string{"a", "b", "c", "checkpoint", "reserve"} {
		if f.answers[k] != "ok" {
			t.Errorf("%s answered %q, want ok", k, f.answers[k])
		}
	}
	if err := f.p.submit(f.task("e", nil)); err != nil {
		t.Fatalf("submit after the queue drained: %v", err)
	}

	// An unset bound is the default one, never none.
	var unset writePipeline
	unset.queue = make([]*task, DefaultWriteQueue)
	if !unset.full() {
		t.Fatalf("a pipeline without a bound takes more than %d writes", DefaultWriteQueue)
	}
}
