package proxy

import (
	"strings"
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/room"
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
	if err == nil || !strings.Contains(err.Error(), "address_budget belong to capacity rooms") {
		t.Fatalf("a rate room's block with address_budget: %v", err)
	}
}

// BenchmarkRefusedFirstRequest is the cost of a first request over its
// address's budget: the address read, the bucket, the page with no place.
func BenchmarkRefusedFirstRequest(b *testing.B) {
	f := newFakeRoom(b, `active = 1
      on_store_error = "wait"
      address_budget {
        per_minute = 1
        burst      = 1
      }`)
	f.get("192.0.2.9", "")
	b.ReportAllocs()
	for b.Loop() {
		if w, _ := f.get("192.0.2.9", ""); w.Code != 503 {
			b.Fatal(w.Code)
		}
	}
}
