package membership

import "sync"

// stopper is a watch's stop signal and the goroutines that heed it.
type stopper struct {
	stop chan struct{}
	wg   sync.WaitGroup
}

// halt closes stop (once; a second halt only waits) and waits for the
// goroutines to end.
func (s *stopper) halt() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	s.wg.Wait()
}
