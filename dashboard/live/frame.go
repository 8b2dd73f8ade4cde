package live

import (
	"time"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
)

// Frame is what a dashboard socket receives, at most once a second: the
// room's figures, the history samples it has not seen yet (the last 30
// minutes in its first frame) and the self-regulating rate's adjustments.
type Frame struct {
	Type                 string                `json:"type"`
	Room                 string                `json:"room"`
	Slug                 string                `json:"slug"`
	Name                 string                `json:"name"`
	At                   string                `json:"at"`
	State                string                `json:"state"`
	Mode                 string                `json:"mode"`
	Active               bool                  `json:"active"`
	Test                 bool                  `json:"test"`
	Waiting              uint64                `json:"waiting"`
	Serving              uint64                `json:"serving"`
	Issued               uint64                `json:"issued"`
	RatePerMinute        float64               `json:"ratePerMinute"`
	InflowPerMinute      float64               `json:"inflowPerMinute"`
	EstimatedWaitSeconds int                   `json:"estimatedWaitSeconds"`
	AutoRate             AutoRate              `json:"autoRate"`
	History              []Point               `json:"history"`
	Adjustments          []protocol.Adjustment `json:"adjustments"`
}

// AutoRate is the part of the self-regulating rate the gauges show.
type AutoRate struct {
	Enabled bool    `json:"enabled"`
	MinRate float64 `json:"minRate"`
	MaxRate float64 `json:"maxRate"`
}

// Point is one second of the history chart.
type Point struct {
	// T is Unix seconds.
	T       int64   `json:"t"`
	Waiting uint64  `json:"waiting"`
	Inflow  float64 `json:"inflow"`
	Rate    float64 `json:"rate"`
}

func pointOf(s room.Sample) Point {
	return Point{T: s.T, Waiting: s.Waiting, Inflow: s.Inflow, Rate: s.Rate}
}

// frameOf builds the frame of r at now with history hist.
func frameOf(r *protocol.StatsResult, hist []Point, now time.Time) Frame {
	f := r.Figures
	adj := r.Adjustments
	if adj == nil {
		adj = []protocol.Adjustment{}
	}
	if hist == nil {
		hist = []Point{}
	}
	mode := f.Mode
	if mode == "" { // no sample yet
		mode = room.ModeQueue
	}
	return Frame{Type: "stats", Room: r.ID, Slug: r.Slug, Name: r.Name, At: now.UTC().Format(time.RFC3339Nano),
		State: f.State, Mode: mode, Active: f.Active,
		Test:    r.Test,
		Waiting: f.Waiting, Serving: f.Serving, Issued: f.Issued,
		RatePerMinute: f.Rate, InflowPerMinute: f.Inflow, EstimatedWaitSeconds: f.EstimatedWait,
		AutoRate: AutoRate{Enabled: r.AutoRate.Enabled, MinRate: r.AutoRate.MinRate, MaxRate: r.AutoRate.MaxRate},
		History:  hist, Adjustments: adj}
}
