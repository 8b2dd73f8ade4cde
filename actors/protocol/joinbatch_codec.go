package protocol

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// The JSON of the batch messages, written and read by hand: one batch
// message crosses the cluster for every batch of joins, and encoding/json's
// reflection (and the stack it grows on the actor's fresh goroutine) cost
// more than the grain's work for the batch. The encoding is the one
// encoding/json gives the same types; what this reader does not expect
// (another key order, spaces, the view) goes to encoding/json.

// MarshalJSON writes r as encoding/json would.
func (r JoinBatchRequest) MarshalJSON() ([]byte, error) {
	b := appendUintField(make([]byte, 0, 80), `{"count":`, r.Count)
	if r.Known {
		b = append(b, `,"known":true`...)
	}
	if r.Epoch != 0 {
		b = appendIntField(b, `,"epoch":`, r.Epoch)
	}
	if r.Version != 0 {
		b = appendUintField(b, `,"version":`, r.Version)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads r.
func (r *JoinBatchRequest) UnmarshalJSON(b []byte) error {
	type plain JoinBatchRequest
	return readFields(b, r, func(out *JoinBatchRequest, key, v []byte) (ok bool) {
		switch string(key) {
		case "count":
			out.Count, ok = parseUint(v)
		case "known":
			out.Known, ok = parseBool(v)
		case "epoch":
			out.Epoch, ok = parseInt(v)
		case "version":
			out.Version, ok = parseUint(v)
		}
		return ok
	}, func(p plain) JoinBatchRequest { return JoinBatchRequest(p) })
}

// MarshalJSON writes r as encoding/json would.
func (r JoinBatchResult) MarshalJSON() ([]byte, error) {
	if r.View != nil || !finite(r.Line.Base) || !finite(r.Line.Rate) {
		type plain JoinBatchResult
		return json.Marshal(plain(r))
	}
	b := appendUintField(make([]byte, 0, 160), `{"first":`, r.First)
	b = appendUintField(b, `,"count":`, r.Count)
	b = appendIntField(b, `,"epoch":`, r.Epoch)
	b = appendUintField(b, `,"version":`, r.Version)
	b = appendFloat(append(b, `,"line":{"base":`...), r.Line.Base)
	b = appendIntField(b, `,"t0":`, r.Line.T0)
	b = appendFloat(append(b, `,"rate":`...), r.Line.Rate)
	b = appendUintField(b, `},"issued":`, r.Issued)
	return append(b, '}'), nil
}

// UnmarshalJSON reads r.
func (r *JoinBatchResult) UnmarshalJSON(b []byte) error {
	type plain JoinBatchResult
	return readFields(b, r, func(out *JoinBatchResult, key, v []byte) (ok bool) {
		switch string(key) {
		case "first":
			out.First, ok = parseUint(v)
		case "count":
			out.Count, ok = parseUint(v)
		case "epoch":
			out.Epoch, ok = parseInt(v)
		case "version":
			out.Version, ok = parseUint(v)
		case "issued":
			out.Issued, ok = parseUint(v)
		case "line":
			out.Line, ok = parseLine(v)
		}
		return ok
	}, func(p plain) JoinBatchResult { return JoinBatchResult(p) })
}

// readFields reads the flat JSON object b into *dst with field, one key at
// a time; what field or eachField does not expect goes to encoding/json,
// into P (T's fields without T's methods) and back through conv. On an
// error *dst is left as it was.
func readFields[T, P any](b []byte, dst *T, field func(out *T, key, v []byte) bool, conv func(P) T) error {
	var out T
	if eachField(b, func(key, v []byte) bool { return field(&out, key, v) }) {
		*dst = out
		return nil
	}
	var p P
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*dst = conv(p)
	return nil
}

func appendUintField(b []byte, key string, v uint64) []byte {
	return strconv.AppendUint(append(b, key...), v, 10)
}

func appendIntField(b []byte, key string, v int64) []byte {
	return strconv.AppendInt(append(b, key...), v, 10)
}

func parseLine(b []byte) (room.Line, bool) {
	var l room.Line
	ok := eachField(b, func(key, v []byte) bool {
		var ok bool
		switch string(key) {
		case "base":
			l.Base, ok = parseFloat(v)
		case "t0":
			l.T0, ok = parseInt(v)
		case "rate":
			l.Rate, ok = parseFloat(v)
		}
		return ok
	})
	return l, ok
}

// eachField calls f with each key and raw value of the flat JSON object b,
// written without spaces, whose values are numbers, booleans or flat
// objects of numbers. It reports false, having stopped, at anything else,
// at an unknown key or when f does.
func eachField(b []byte, f func(key, v []byte) bool) bool {
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return false
	}
	b = b[1 : len(b)-1]
	for len(b) > 0 {
		if b[0] != '"' {
			return false
		}
		end := 1
		for end < len(b) && b[end] != '"' {
			if b[end] == '\\' {
				return false
			}
			end++
		}
		if end+1 >= len(b) || b[end+1] != ':' {
			return false
		}
		key := b[1:end]
		b = b[end+2:]
		n := valueLen(b)
		if n == 0 || !f(key, b[:n]) {
			return false
		}
		b = b[n:]
		if len(b) > 0 {
			if b[0] != ',' || len(b) == 1 {
				return false
			}
			b = b[1:]
		}
	}
	return true
}

// valueLen returns the length of the value at the start of b: up to the
// next ',' outside an object, or a whole flat object; 0 for what eachField
// does not read.
func valueLen(b []byte) int {
	if len(b) > 0 && b[0] == '{' {
		for i, c := range b {
			switch c {
			case '}':
				return i + 1
			case '{', '[', '"':
				if i > 0 && c != '"' {
					return 0
				}
			}
		}
		return 0
	}
	for i, c := range b {
		switch c {
		case ',':
			return i
		case '{', '[', '"', '}', ' ':
			return 0
		}
	}
	return len(b)
}

func parseUint(v []byte) (uint64, bool) {
	n, err := strconv.ParseUint(string(v), 10, 64)
	return n, err == nil
}

func parseInt(v []byte) (int64, bool) {
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil
}

func parseFloat(v []byte) (float64, bool) {
	f, err := strconv.ParseFloat(string(v), 64)
	return f, err == nil
}

func parseBool(v []byte) (bool, bool) {
	switch string(v) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// appendFloat writes f as encoding/json does.
func appendFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9, as encoding/json does
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
