package proxy

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/internal/testwait"
)

func TestConfigAddressBudget(t *testing.T) {
	for _, tc := range []struct {
		name, block string
		want        room.AddressBudget
		err         string
	}{
		{"defaults", ``, room.AddressBudget{PerMinute: 30, Burst: 60}, ""},
		{"set", `address_budget {
        per_minute = 120
        burst      = 500
      }`, room.AddressBudget{PerMinute: 120, Burst: 500}, ""},
		{"burst only", `address_budget { burst = 5 }`, room.AddressBudget{PerMinute: 30, Burst: 5}, ""},
		{"zero rate", `address_budget { per_minute = 0 }`, room.AddressBudget{}, "per_minute must be 1–6000000"},
		{"huge burst", `address_budget { burst = 20000000 }`, room.AddressBudget{}, "burst must be 1–10000000"},
		{"unknown field", `address_budget { rate = 3 }`, room.AddressBudget{}, "Unsupported argument"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse("t.hcl", []byte(`host "shop.test" {
  location "/" {
    static_files { directory = "." }
    waiting_room {
      active = 1
      on_store_error = "wait"
      `+tc.block+`
    }
  }
}`))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, want an error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Hosts["shop.test"].Locations[0].Rooms[0].Room.AddressBudget; got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	_, err := Parse("t.hcl", []byte(`host "shop.test" {
  location "/" {
    static_files { directory = "." }
    waiting_room {
      room = "launch"
      on_store_error = "wait"
      address_budget { burst = 5 }
    }
  }
}`))
	if err == nil || !strings.Contains(err.Error(), "belong to capacity rooms") {
		t.Fatalf("a rate room's block with address_budget: %v", err)
	}
}

// BenchmarkFirstRequest compares, in one run, a first request (no cookie)
// to a full room through the real grain (a provisional place: one call, no
// write) with one over its address's budget (the address, the bucket, the
// page with no place; no grain) and one asked for proof of work (a signed
// challenge and the challenge page; no grain, a count sent with the next
// batch). The handler is called directly.
func BenchmarkFirstRequest(b *testing.B) {
	for _, tc := range []struct{ name, budget string }{
		{"provisional", `address_budget {
        per_minute = 6000000
        burst      = 10000000
      }`},
		{"refused", `address_budget {
        per_minute = 1
        burst      = 1
      }`},
		{"challenged", `address_budget {
        per_minute = 6000000
        burst      = 10000000
      }
      pow_auto {
        arrivals_per_minute = 60
        bits                = 8
      }`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			f := startFloodRoom(b, `active = 1
      `+tc.budget)
			var w *httptest.ResponseRecorder
			get := func() int {
				req := httptest.NewRequest("GET", "/", nil)
				req.Host, req.RemoteAddr = "shop.test", "192.0.2.9:40000"
				w = httptest.NewRecorder()
				f.h.ServeHTTP(w, req)
				return w.Code
			}
			testwait.UntilEvery(b, 20*time.Second, 50*time.Millisecond, "the room answering 200", func() bool { return get() == 200 })
			if tc.name == "challenged" { // first requests until the room asks for work
				for deadline := time.Now().Add(20 * time.Second); get() != 503 || !strings.Contains(w.Body.String(), "data-challenge"); {
					if time.Now().After(deadline) {
						b.Fatal("proof of work never turned on")
					}
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if st := get(); st != 503 {
					b.Fatal(st)
				}
			}
		})
	}
}
