package protocol

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// The JSON of the batch messages, written and read by hand: one batch
// message crosses the cluster for every batch of joins, and encoding/json's
// reflection (and the stack it grows on the actor's fresh goroutine) cost
// more than the grain's work for the batch. The encoding is the one
// encoding/json gives the same types, byte for byte (nodes of the previous
// release read it); the reader takes exactly that encoding, in any key
// order, and gives what it does not take (spaces, escapes, other keys,
// the view, anything that is not JSON) to encoding/json, so that it never
// accepts what encoding/json refuses.

// MarshalJSON writes r as encoding/json would.
func (r JoinBatchRequest) MarshalJSON() ([]byte, error) {
	b := appendUint(make([]byte, 0, 80), `{"count":`, r.Count)
	if r.Known {
		b = append(b, `,"known":true`...)
	}
	if r.Epoch != 0 {
		b = appendInt(b, `,"epoch":`, r.Epoch)
	}
	if r.Version != 0 {
		b = appendUint(b, `,"version":`, r.Version)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads r; on an error r is left as it was.
func (r *JoinBatchRequest) UnmarshalJSON(b []byte) error {
	var out JoinBatchRequest
	if eachField(b, out.set) {
		*r = out
		return nil
	}
	type plain JoinBatchRequest
	return readPlain(b, (*plain)(r))
}

// set reads key's value v into r; it reports false for a key or value the
// reader does not take.
func (r *JoinBatchRequest) set(key, v []byte) (ok bool) {
	switch string(key) {
	case "count":
		r.Count, ok = parseUint(v)
	case "known":
		r.Known, ok = parseBool(v)
	case "epoch":
		r.Epoch, ok = parseInt(v)
	case "version":
		r.Version, ok = parseUint(v)
	}
	return ok
}

// MarshalJSON writes r as encoding/json would.
func (r JoinBatchResult) MarshalJSON() ([]byte, error) {
	if r.View != nil || !finite(r.Line.Base) || !finite(r.Line.Rate) {
		type plain JoinBatchResult
		return json.Marshal(plain(r))
	}
	b := appendUint(make([]byte, 0, 160), `{"first":`, r.First)
	b = appendUint(b, `,"count":`, r.Count)
	b = appendInt(b, `,"epoch":`, r.Epoch)
	b = appendUint(b, `,"version":`, r.Version)
	b = appendFloat(b, `,"line":{"base":`, r.Line.Base)
	b = appendInt(b, `,"t0":`, r.Line.T0)
	b = appendFloat(b, `,"rate":`, r.Line.Rate)
	b = appendUint(b, `},"issued":`, r.Issued)
	return append(b, '}'), nil
}

// UnmarshalJSON reads r; on an error r is left as it was.
func (r *JoinBatchResult) UnmarshalJSON(b []byte) error {
	var out JoinBatchResult
	if eachField(b, out.set) {
		*r = out
		return nil
	}
	type plain JoinBatchResult
	return readPlain(b, (*plain)(r))
}

// set reads key's value v into r; it reports false for a key or value the
// reader does not take.
func (r *JoinBatchResult) set(key, v []byte) (ok bool) {
	switch string(key) {
	case "first":
		r.First, ok = parseUint(v)
	case "count":
		r.Count, ok = parseUint(v)
	case "epoch":
		r.Epoch, ok = parseInt(v)
	case "version":
		r.Version, ok = parseUint(v)
	case "issued":
		r.Issued, ok = parseUint(v)
	case "line":
		ok = eachField(v, (*lineFields)(&r.Line).set)
	}
	return ok
}

// lineFields is room.Line as the reader fills it.
type lineFields room.Line

func (l *lineFields) set(key, v []byte) (ok bool) {
	switch string(key) {
	case "base":
		l.Base, ok = parseFloat(v)
	case "t0":
		l.T0, ok = parseInt(v)
	case "rate":
		l.Rate, ok = parseFloat(v)
	}
	return ok
}

// readPlain reads b with encoding/json into *dst, the type of a batch
// message without its methods; on an error *dst is left as it was.
func readPlain[P any](b []byte, dst *P) error {
	var p P
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*dst = p
	return nil
}

// eachField calls set with each key and raw value of the JSON object b,
// written without spaces, whose keys have no escapes and whose values are
// numbers, booleans or flat objects of those. It reports false, having
// stopped, at anything else or when set does.
func eachField(b []byte, set func(key, v []byte) bool) bool {
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return false
	}
	b = b[1 : len(b)-1]
	for len(b) > 0 {
		if b[0] != '"' {
			return false
		}
		end := bytes.IndexAny(b[1:], `"\`) + 1
		if end == 0 || b[end] != '"' || end+1 >= len(b) || b[end+1] != ':' {
			return false
		}
		key := b[1:end]
		b = b[end+2:]
		n := valueLen(b)
		if n == 0 || !set(key, b[:n]) {
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

// valueLen returns the length of the value at the start of b: a flat
// object up to its '}', anything else up to the next ','; 0 for a value
// eachField does not read (a string, an array, a nested object, a space).
func valueLen(b []byte) int {
	if len(b) > 0 && b[0] == '{' {
		if i := bytes.IndexAny(b[1:], "{[}"); i >= 0 && b[1+i] == '}' {
			return i + 2
		}
		return 0
	}
	i := bytes.IndexAny(b, `,{["} `)
	switch {
	case i < 0:
		return len(b)
	case b[i] == ',':
		return i
	}
	return 0
}

// parseUint reads a JSON integer that fits a uint64: digits without a
// sign, no leading zero.
func parseUint(v []byte) (uint64, bool) {
	if len(v) == 0 || len(v) > 1 && v[0] == '0' {
		return 0, false
	}
	var n uint64
	for _, c := range v {
		d := uint64(c - '0')
		if d > 9 || n > (math.MaxUint64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// parseInt reads a JSON integer that fits an int64.
func parseInt(v []byte) (int64, bool) {
	neg := len(v) > 0 && v[0] == '-'
	if neg {
		v = v[1:]
	}
	u, ok := parseUint(v)
	switch {
	case !ok:
		return 0, false
	case neg && u <= 1<<63:
		return int64(-u), true // two's complement: 1<<63 is math.MinInt64
	case !neg && u <= math.MaxInt64:
		return int64(u), true
	}
	return 0, false
}

// parseFloat reads a JSON number as encoding/json reads it into a float64.
func parseFloat(v []byte) (float64, bool) {
	if !isNumber(v) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	return f, err == nil
}

// isNumber reports whether v is a number in JSON's grammar:
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func isNumber(v []byte) bool {
	i := 0
	if i < len(v) && v[i] == '-' {
		i++
	}
	if i < len(v) && v[i] == '0' {
		i++
	} else if i = digits(v, i); i == 0 || v[i-1] == '-' {
		return false
	}
	if i < len(v) && v[i] == '.' {
		if i = digits(v, i+1); v[i-1] == '.' {
			return false
		}
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			i++
		}
		if j := digits(v, i); j > i {
			i = j
		} else {
			return false
		}
	}
	return i == len(v)
}

// digits returns the index of the first byte at or after i in v that is
// not a decimal digit.
func digits(v []byte, i int) int {
	for i < len(v) && v[i]-'0' <= 9 {
		i++
	}
	return i
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

func appendUint(b []byte, key string, v uint64) []byte {
	return strconv.AppendUint(append(b, key...), v, 10)
}

func appendInt(b []byte, key string, v int64) []byte {
	return strconv.AppendInt(append(b, key...), v, 10)
}

// appendFloat writes key and f as encoding/json writes a float64.
func appendFloat(b []byte, key string, f float64) []byte {
	b = append(b, key...)
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

// Marshal is json.Marshal for the bodies of the calls between front and
// grain. A batch message is written by its own writer alone: its bytes are
// encoding/json's already, so encoding/json's check and copy of them are
// left out.
func Marshal(v any) ([]byte, error) {
	switch m := v.(type) {
	case JoinBatchRequest:
		return m.MarshalJSON()
	case JoinBatchResult:
		return m.MarshalJSON()
	}
	return json.Marshal(v)
}

// Unmarshal is json.Unmarshal for the bodies of the calls between front
// and grain. A batch message is read by its own reader alone: it reads
// what encoding/json reads and refuses what it refuses (FuzzBatchMessages),
// so encoding/json's check of the whole input first is left out.
func Unmarshal(b []byte, v any) error {
	switch m := v.(type) {
	case *JoinBatchRequest:
		return m.UnmarshalJSON(b)
	case *JoinBatchResult:
		return m.UnmarshalJSON(b)
	}
	return json.Unmarshal(b, v)
}
