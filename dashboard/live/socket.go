package live

import (
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aditus-queue/aditus-queue/transport/adminws"
)

// socket is one dashboard connection. Its writer goroutine owns writes of
// data frames; close may come from the reader, the feed or the hub.
type socket struct {
	conn *websocket.Conn
	send chan *websocket.PreparedMessage

	once sync.Once
	gone chan struct{}
}

// offer queues pm without blocking; false when the socket is too slow.
func (s *socket) offer(pm *websocket.PreparedMessage) bool {
	select {
	case <-s.gone:
		return true
	default:
	}
	select {
	case s.send <- pm:
		return true
	default:
		return false
	}
}

func (s *socket) writer() {
	for {
		select {
		case <-s.gone:
			return
		case pm := <-s.send:
			_ = s.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
			if err := s.conn.WritePreparedMessage(pm); err != nil {
				s.close(websocket.CloseAbnormalClosure, "")
				return
			}
		}
	}
}

// close says goodbye with code and reason (once) and closes the
// connection, which ends the reader.
func (s *socket) close(code int, reason string) {
	s.once.Do(func() {
		close(s.gone)
		if code != websocket.CloseAbnormalClosure {
			adminws.WriteClose(s.conn, code, reason)
		}
		_ = s.conn.Close()
	})
}
