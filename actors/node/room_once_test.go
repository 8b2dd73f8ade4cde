package node

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/cluster"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/loadtest"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/actors/wire"
	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
)

// retrySignal is a log handler that reports each retry of a grain call.
type retrySignal struct {
	slog.Handler
	retried chan struct{}
}

func (h *retrySignal) Enabled(context.Context, slog.Level) bool { return true }

func (h *retrySignal) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "grain call retry" {
		select {
		case h.retried <- struct{}{}:
		default:
		}
	}
	if r.Level < slog.LevelWarn {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h *retrySignal) WithAttrs(as []slog.Attr) slog.Handler {
	return &retrySignal{Handler: h.Handler.WithAttrs(as), retried: h.retried}
}

func (h *retrySignal) WithGroup(name string) slog.Handler {
	return &retrySignal{Handler: h.Handler.WithGroup(name), retried: h.retried}
}

// onceRoom starts a node on l with a room holding one bypass code; the
// caller stops the node.
func onceRoom(t *testing.T, ctx context.Context, l persistence.Log, logger *slog.Logger) (n *Node, id string, code protocol.CodeInfo) {
	t.Helper()
	n = mustStart(t, Config{Member: true, CallTimeout: 30 * time.Second, Deps: grain.Deps{Log: l,
		WriteTimeout: 10 * time.Second, Logger: logger}})
	cr := mustCreate(t, ctx, n, room.Config{Slug: "once", Name: "Once", RatePerMinute: 60, Active: true})
	if err := n.Client.Admin(ctx, cr.View.ID, protocol.OpCodeAdd, protocol.AdminRequest{Actor: "admin", Label: "Press"}, &code); err != nil {
		t.Fatal(err)
	}
	return n, cr.View.ID, code
}

func codeUses(t *testing.T, ctx context.Context, n *Node, id string) int {
	t.Helper()
	var codes []protocol.CodeInfo
	if err := n.Client.Admin(ctx, id, protocol.OpCodeList, protocol.AdminRequest{Actor: "admin"}, &codes); err != nil {
		t.Fatal(err)
	}
	if len(codes) != 1 {
		t.Fatalf("codes: %+v, want one", codes)
	}
	return codes[0].Uses
}

// A redemption whose write is slower than the client's attempt bound is
// retried by the client; the retry joins the first attempt instead of
// writing again: the code is used once and the caller gets a token.
func TestRedeemRetriedPastAttemptAppliesOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l := &gateLog{Log: memlog.New(), held: make(chan struct{}, 1), open: make(chan struct{})}
	sig := &retrySignal{Handler: startNodeLogger().Handler(), retried: make(chan struct{}, 1)}
	n, id, code := onceRoom(t, ctx, l, slog.New(sig))
	stopNode(t, n)

	l.shut.Store(true)
	type result struct {
		r   *protocol.TokenResult
		err error
	}
	got := make(chan result, 1)
	go func() {
		r, err := n.Client.Redeem(ctx, id, code.Code)
		got <- result{r, err}
	}()
	select {
	case <-l.held: // the first attempt's write is in flight
	case <-ctx.Done():
		t.Fatal("the redemption never reached the log")
	}
	select {
	case <-sig.retried: // its answer was late: the client tried again
	case <-ctx.Done():
		t.Fatal("the client never retried")
	}
	// The retry's request is on its way; one more retry proves the grain
	// saw it (each attempt waits for its answer or its bound).
	select {
	case <-sig.retried:
	case <-ctx.Done():
		t.Fatal("the client never retried twice")
	}
	l.shut.Store(false)
	close(l.open)
	r := <-got
	if r.err != nil || r.r.Token == "" {
		t.Fatalf("redeem: %+v, %v; want a token", r.r, r.err)
	}
	if uses := codeUses(t, ctx, n, id); uses != 1 {
		t.Fatalf("code used %d times by one redemption, want 1", uses)
	}
}

// A retry that comes after the first answer gets that answer again, and one
// that reaches the next activation of the room (the first answer lost with
// its member) finds the command applied: a fresh token, no second use.
func TestRedeemRetryAfterAnswerAndRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l := memlog.New()
	n, id, code := onceRoom(t, ctx, l, startNodeLogger())
	body, _ := json.Marshal(protocol.RedeemRequest{Code: code.Code})
	req := &wire.Request{Op: protocol.OpRedeem, Body: body, Id: "retried-command"}
	ask := func(n *Node) *wire.Response {
		res, err := n.cluster.Request(id, protocol.KindRoom, req, cluster.WithTimeout(30*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		return res.(*wire.Response)
	}
	first, second := ask(n), ask(n)
	if first.Code != "" || string(second.Body) != string(first.Body) {
		t.Fatalf("retry answered %q %s, want the first answer %s", second.Code, second.Body, first.Body)
	}
	if uses := codeUses(t, ctx, n, id); uses != 1 {
		t.Fatalf("code used %d times, want 1", uses)
	}
	stop, cancelStop := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancelStop()
	n.Stop(stop)

	n2 := mustStart(t, Config{Member: true, Deps: grain.Deps{Log: l}})
	stopNode(t, n2)
	if r := ask(n2); r.Code != "" {
		t.Fatalf("retry after restart: %q %s, want a token", r.Code, r.Message)
	}
	if uses := codeUses(t, ctx, n2, id); uses != 1 {
		t.Fatalf("after restart the code is used %d times, want 1", uses)
	}
	long := &wire.Request{Op: protocol.OpRedeem, Body: body, Id: string(make([]byte, room.MaxCommandID+1))}
	res, err := n2.cluster.Request(id, protocol.KindRoom, long, cluster.WithTimeout(30*time.Second))
	if err != nil || res.(*wire.Response).Code != protocol.CodeInvalid {
		t.Fatalf("over-long command id: %v %v, want invalid", res, err)
	}
}

// A retried schedule add gets the first answer and adds one schedule.
func TestScheduleAddRetriedAppliesOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	n := mustStart(t, Config{Member: true, Deps: grain.Deps{Log: memlog.New()}})
	stopNode(t, n)
	if _, err := n.Client.Schedules(ctx); err != nil { // the grain is placed
		t.Fatal(err)
	}
	sc := loadtest.Schedule{Cron: "0 3 * * *", Spec: loadtest.Spec{Slug: "s", Profile: loadtest.ProfileJoin, RatePerSecond: 1, DurationSeconds: 1}}
	body, _ := json.Marshal(protocol.LoadTestRequest{Schedule: &sc})
	req := &wire.Request{Op: protocol.OpSchAdd, Body: body, Id: "retried-schedule"}
	var answers []string
	for range 2 {
		res, err := n.cluster.Request(protocol.LoadTestsID, protocol.KindLoadTests, req, cluster.WithTimeout(30*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		r := res.(*wire.Response)
		if r.Code != "" {
			t.Fatalf("add: %s %s", r.Code, r.Message)
		}
		answers = append(answers, string(r.Body))
	}
	if answers[0] != answers[1] {
		t.Fatalf("retry answered %s, want the first answer %s", answers[1], answers[0])
	}
	list, err := n.Client.Schedules(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("schedules after a retried add: %+v %v, want one", list, err)
	}
}
