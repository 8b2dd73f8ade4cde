package clustertest

import (
	"encoding/json"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"
)

// fairnessJoins is how many joins the fairness measurement sends, one every
// fairnessEvery, round robin over the fronts.
const (
	fairnessJoins = 900
	fairnessEvery = time.Millisecond
)

// inversions measures how far the numbers issued depart from the order the
// joins were sent in: the share of pairs issued out of send order (the
// normalised Kendall tau distance), the largest send-time gap of such a
// pair, and how many of them were sent more than limit apart. same, when
// set, restricts the pairs to those it accepts.
type inversions struct {
	pairs, inverted, overLimit int
	maxGap                     time.Duration
}

// frontJoin is a join and the front it went through.
type frontJoin struct {
	joined
	front int
}

// measureInversions compares the pairs of recs, which are in send order.
func measureInversions(recs []frontJoin, limit time.Duration, same func(a, b frontJoin) bool) inversions {
	var m inversions
	for i := range recs {
		for j := i + 1; j < len(recs); j++ {
			if same != nil && !same(recs[i], recs[j]) {
				continue
			}
			m.pairs++
			if recs[i].number < recs[j].number {
				continue
			}
			m.inverted++
			gap := recs[j].start.Sub(recs[i].start)
			if gap > m.maxGap {
				m.maxGap = gap
			}
			if gap > limit {
				m.overLimit++
			}
		}
	}
	return m
}

// TestFairnessAcrossFronts sends joins with known send times through three
// fronts (two members and a front-only node) and reports how far the
// numbers they get depart from the send order. Joins are batched per front
// for about a millisecond, so order is exact within a front's batch and
// close across fronts; the goal is no inversion of joins frontJoin more than
// 5 ms apart. The figures are reported, not asserted (they depend on the
// machine's load); the test fails on a lost join or a number given twice.
func TestFairnessAcrossFronts(t *testing.T) {
	c := startCluster(t, brokers(t), 2)
	fronts := c.all()
	const slug = "fair-fronts"
	c.createRoom(c.members[0], slug, 60)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	// Warm up: the grain active, a few connections open to each front.
	var warm sync.WaitGroup
	for _, f := range fronts {
		for range 8 {
			warm.Add(1)
			go func() {
				defer warm.Done()
				joinWith(client, f.base, slug)
			}()
		}
	}
	warm.Wait()

	recs := make([]frontJoin, fairnessJoins)
	var wg sync.WaitGroup
	begin := time.Now().Add(50 * time.Millisecond)
	for k := range fairnessJoins {
		time.Sleep(time.Until(begin.Add(time.Duration(k) * fairnessEvery)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := k % len(fronts)
			recs[k] = frontJoin{joinWith(client, fronts[f].base, slug), f}
		}()
	}
	wg.Wait()
	seen := map[uint64]bool{}
	for k, r := range recs {
		if r.status != 200 || r.err != nil || r.number == 0 {
			t.Fatalf("join %d through %s: %d %v", k, fronts[r.front].name, r.status, r.err)
		}
		if seen[r.number] {
			t.Fatalf("number %d given twice", r.number)
		}
		seen[r.number] = true
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].start.Before(recs[j].start) })
	const limit = 5 * time.Millisecond
	all := measureInversions(recs, limit, nil)
	within := measureInversions(recs, limit, func(a, b frontJoin) bool { return a.front == b.front })
	across := measureInversions(recs, limit, func(a, b frontJoin) bool { return a.front != b.front })
	var lat []time.Duration
	for _, r := range recs {
		lat = append(lat, r.end.Sub(r.start))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	report := func(name string, m inversions) {
		t.Logf("%-13s %7d pairs, %6d out of send order (Kendall tau distance %.4f), largest gap %v, %d more than %v apart",
			name, m.pairs, m.inverted, float64(m.inverted)/float64(max(m.pairs, 1)), m.maxGap.Round(10*time.Microsecond), m.overLimit, limit)
	}
	t.Logf("%d joins, one every %v, round robin over %d fronts; join latency p50 %v p99 %v",
		len(recs), fairnessEvery, len(fronts), lat[len(lat)/2].Round(10*time.Microsecond), lat[len(lat)*99/100].Round(10*time.Microsecond))
	report("all pairs", all)
	report("within front", within)
	report("across fronts", across)
}

// joinWith is join on client.
func joinWith(client *http.Client, base, slug string) joined {
	j := joined{start: time.Now()}
	req, _ := http.NewRequest("POST", base+"/queue/"+slug+"/join", nil)
	res, err := client.Do(req)
	j.end = time.Now()
	if err != nil {
		j.err = err
		return j
	}
	defer res.Body.Close()
	j.status = res.StatusCode
	var body struct {
		Number uint64 `json:"number"`
	}
	j.err = json.NewDecoder(res.Body).Decode(&body)
	j.number = body.Number
	return j
}
