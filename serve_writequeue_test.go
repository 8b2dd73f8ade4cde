package main

import (
	"strings"
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/grain"
)

func TestRoomWriteQueueFlag(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want int
		err  bool
	}{
		{"default", nil, nil, grain.DefaultWriteQueue, false},
		{"flag", []string{"--room-write-queue", "500"}, nil, 500, false},
		{"env twin", nil, map[string]string{"AQ_ROOM_WRITE_QUEUE": "2000"}, 2000, false},
		{"zero", []string{"--room-write-queue", "0"}, nil, 0, true},
		{"beyond the bound", []string{"--room-write-queue", "100001"}, nil, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseServeFlags(tc.args, func(k string) string { return tc.env[k] })
			if tc.err {
				if err == nil || !strings.Contains(err.Error(), "--room-write-queue") {
					t.Fatalf("got %v, want an error naming --room-write-queue", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.RoomWriteQueue != tc.want {
				t.Fatalf("got %d, want %d", c.RoomWriteQueue, tc.want)
			}
		})
	}
}
