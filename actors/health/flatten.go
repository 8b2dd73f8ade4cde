package health

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// maxMetrics bounds how many metrics one answer yields.
const maxMetrics = 1000

// Flatten returns the numeric fields of a JSON body by dot path
// ({"metrics":{"cpuLoad":0.4}} → "metrics.cpuLoad": 0.4; array elements by
// index, "queues.0.depth"). Booleans count as 0 and 1. A body that is not
// JSON yields no metrics. At most 1000 metrics are kept.
func Flatten(body []byte) map[string]float64 {
	out := map[string]float64{}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return out
	}
	flatten(out, "", v, 0)
	return out
}

func flatten(out map[string]float64, path string, v any, depth int) {
	if len(out) >= maxMetrics || depth > 32 {
		return
	}
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			flatten(out, join(k), e, depth+1)
		}
	case []any:
		for i, e := range x {
			flatten(out, join(strconv.Itoa(i)), e, depth+1)
		}
	case json.Number:
		if f, err := x.Float64(); err == nil && path != "" {
			out[path] = f
		}
	case bool:
		if path != "" {
			out[path] = 0
			if x {
				out[path] = 1
			}
		}
	}
}
