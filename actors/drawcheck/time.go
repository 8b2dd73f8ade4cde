package drawcheck

import "time"

func timeMs(ms int64) time.Time { return time.UnixMilli(ms) }
