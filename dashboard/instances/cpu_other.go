//go:build !unix

package instances

import "time"

// cpuTime is not measured on this platform: the report shows 0 % CPU.
func cpuTime() time.Duration { return 0 }
