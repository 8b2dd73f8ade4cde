package protocol

import (
	"github.com/aditus-queue/aditus-queue/actors/loadtest"
	"github.com/aditus-queue/aditus-queue/bench/load"
)

// Operations of the load-test grain.
const (
	OpLTStart   = "lt-start"
	OpLTList    = "lt-list"
	OpLTGet     = "lt-get"
	OpLTStop    = "lt-stop"
	OpLTPing    = "lt-ping"
	OpSchAdd    = "schedule-add"
	OpSchList   = "schedule-list"
	OpSchRemove = "schedule-remove"
)

// LoadTestRequest is the body of every load-test operation.
type LoadTestRequest struct {
	Spec     loadtest.Spec      `json:"spec"`
	ID       string             `json:"id,omitempty"`
	Since    int                `json:"since,omitempty"`
	Limit    int                `json:"limit,omitempty"`
	Before   string             `json:"before,omitempty"`
	Schedule *loadtest.Schedule `json:"schedule,omitempty"`
}

// LoadTestPage is one page of the history, newest first; Next is the
// before of the next page, "" on the last.
type LoadTestPage struct {
	Runs []loadtest.Run `json:"runs"`
	Next string         `json:"next,omitempty"`
}

// The load-test grain's kind and identity.
const (
	KindLoadTests = "loadtests"
	LoadTestsID   = "loadtests"
)

// LoadTestJoinPlan is how runLoad's requests of profile p become joins:
// the tickets drawn up front for status polls, then bench/load's mix.
func LoadTestJoinPlan(p loadtest.Profile) loadtest.JoinPlan {
	mix := load.DefaultMix
	switch p {
	case loadtest.ProfileJoin:
		return loadtest.JoinPlan{Share: 1}
	case loadtest.ProfileMix:
		return loadtest.JoinPlan{Upfront: load.DefaultTickets, Share: float64(mix.Joins) / float64(mix.Joins+mix.Polls)}
	}
	return loadtest.JoinPlan{Upfront: load.DefaultTickets}
}
