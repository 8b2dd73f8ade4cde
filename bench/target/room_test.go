package target

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/aditus-queue/aditus-queue/bench/internal/fakequeue"
)

func TestRoomLifecycle(t *testing.T) {
	srv := fakequeue.New("tok")
	defer srv.Close()
	existing := srv.AddSite("spring-sale")
	base, err := Check(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	room, err := NewAdmin(base, "tok", nil).CreateRoom(ctx, 120)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(room.Slug, SlugPrefix) || len(room.Slug) != len(SlugPrefix)+8 {
		t.Errorf("slug: got %q, want %s and 8 hex digits", room.Slug, SlugPrefix)
	}
	if room.ID == existing {
		t.Fatalf("created room took the id of an existing room")
	}
	site, err := room.Site(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if site["name"] != RoomName || site["targetUrl"] != RoomTargetURL {
		t.Errorf("site: got name %v targetUrl %v, want %q %q", site["name"], site["targetUrl"], RoomName, RoomTargetURL)
	}
	if _, err := room.SetRate(ctx, 121); err != nil {
		t.Fatalf("SetRate: %v", err)
	}
	site, err = room.Site(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := site["ratePerMinute"]; got == nil || got.(interface{ String() string }).String() != "121" {
		t.Errorf("ratePerMinute after SetRate: got %v, want 121", got)
	}
	if err := room.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if got := srv.Deleted(); len(got) != 1 || got[0] != room.Slug {
		t.Errorf("deleted: got %v, want [%s]", got, room.Slug)
	}
	if got := srv.Sites(); got != 1 {
		t.Errorf("sites left: got %d, want 1 (the existing room)", got)
	}
}

func TestCreateRoomBadToken(t *testing.T) {
	srv := fakequeue.New("tok")
	defer srv.Close()
	base, _ := Check(srv.URL, nil)
	_, err := NewAdmin(base, "wrong", nil).CreateRoom(context.Background(), 60)
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnauthorized || apiErr.Code != "unauthorized" {
		t.Fatalf("got %v, want a 401 APIError with code unauthorized", err)
	}
}

func TestDeleteAfterCancel(t *testing.T) {
	srv := fakequeue.New("tok")
	defer srv.Close()
	base, _ := Check(srv.URL, nil)
	room, err := NewAdmin(base, "tok", nil).CreateRoom(context.Background(), 60)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := room.Delete(ctx); err != nil {
		t.Fatalf("Delete on a cancelled context: %v", err)
	}
}

func TestSiteIDForms(t *testing.T) {
	if got := siteID(map[string]any{"id": "abc"}); got != "abc" {
		t.Errorf("string id: got %q", got)
	}
	if got := siteID(map[string]any{"id": json.Number("42")}); got != "42" {
		t.Errorf("numeric id: got %q", got)
	}
	if got := siteID(map[string]any{}); got != "" {
		t.Errorf("missing id: got %q", got)
	}
}
