package e2e

import (
	"encoding/base64"
	be "encoding/binary"
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/token"
	"github.com/aditus-queue/aditus-queue/internal/testbin"
	"github.com/aditus-queue/aditus-queue/internal/testwait"
)

// joinLoad joins a room from a few goroutines until stopped, keeping the
// highest number seen and the first tickets.
type joinLoad struct {
	mu      sync.Mutex
	max     float64
	count   int
	tickets []string
	// last is the ticket of the highest number seen.
	last string
	grew chan struct{} // signalled after each join
	stop chan struct{}
	wg   sync.WaitGroup
}

func startJoinLoad(base, slug string) *joinLoad {
	j := &joinLoad{grew: make(chan struct{}, 1), stop: make(chan struct{})}
	for w := 0; w < 4; w++ {
		j.wg.Add(1)
		go func() {
			defer j.wg.Done()
			for {
				select {
				case <-j.stop:
					return
				default:
				}
				res, err := http.Post(base+"/queue/"+slug+"/join", "application/json", nil)
				if err != nil {
					return
				}
				var m map[string]any
				_ = json.NewDecoder(res.Body).Decode(&m)
				res.Body.Close()
				if n, ok := m["number"].(float64); ok {
					j.mu.Lock()
					if n > j.max {
						j.last = m["ticket"].(string)
					}
					j.max, j.count = max(j.max, n), j.count+1
					if len(j.tickets) < 5 {
						j.tickets = append(j.tickets, m["ticket"].(string))
					}
					j.mu.Unlock()
					select {
					case j.grew <- struct{}{}:
					default:
					}
				}
			}
		}()
	}
	return j
}

func (j *joinLoad) joins() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.count
}

func (j *joinLoad) lastTicket() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.last
}

func (j *joinLoad) end() {
	close(j.stop)
	j.wg.Wait()
}

// A backup taken while visitors join, restored into a new node after more
// joins: the new node hands out numbers above every number handed out
// before, and tickets, tokens and keys from before still work. The line is
// kept: a visitor waiting in the image still waits after the restore, and
// a ticket the lost node handed out after the backup is placed when it
// comes back, ahead of everyone who joins after that.
func TestBackupRestoreEndToEnd(t *testing.T) {
	dir, image, restored := t.TempDir(), filepath.Join(t.TempDir(), "backup"), filepath.Join(t.TempDir(), "data")
	const admin = "backup-admin-token-of-24-chars"
	s := startServer(t, dir, testbin.FreeAddr(t), "--admin-token", admin)
	created := s.createOnSale(admin)
	secret := created["secret"].(string)
	st, first := s.call("POST", "/queue/onsale/join", "", nil)
	if st != 200 || first["admitted"] != true {
		t.Fatalf("first join: %d %v", st, first)
	}
	st, tok := s.call("POST", "/queue/onsale/token", "", map[string]any{"ticket": first["ticket"]})
	if st != 200 {
		t.Fatalf("token: %d %v", st, tok)
	}

	load, waiting := backupUnderLoad(t, s, "--data-dir", dir, "--to", image)
	before, lost := load.max, load.last

	out, err := exec.Command(testbin.Binary(t), "restore", "--from", image, "--data-dir", restored).CombinedOutput()
	if err != nil {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	t.Logf("%s", out)
	checkJumped(t, string(out), lost)
	s2 := startServer(t, restored, testbin.FreeAddr(t), "--admin-token", admin)
	s2.joinAbove("the restore", before)
	for _, tk := range append(load.tickets, first["ticket"].(string)) {
		if st, m := s2.call("GET", "/queue/onsale/status?ticket="+tk, "", nil); st != 200 {
			t.Fatalf("ticket from before the backup: %d %v", st, m)
		}
	}
	if st, m := s2.call("GET", "/queue/onsale/status?ticket="+waiting, "", nil); st != 200 || m["admitted"] != false {
		t.Fatalf("a visitor waiting in the image after the restore: %d %v", st, m)
	}
	checkReturned(t, s2, lost)
	if st, m := s2.call("GET", "/queue/onsale/verify?token="+tok["token"].(string), "", nil); st != 200 || m["valid"] != true {
		t.Fatalf("token from before the backup: %d %v", st, m)
	}
	st, g := s2.call("POST", "/queue/onsale/token", "", map[string]any{"ticket": load.tickets[0]})
	if st != 200 {
		t.Fatalf("token for a ticket from before the backup: %d %v", st, g)
	}
	if _, err := token.Verify([]byte(secret), "onsale", g["token"].(string), time.Now()); err != nil {
		t.Fatalf("token after the restore does not verify with the original secret: %v", err)
	}
	if out, err := exec.Command(testbin.Binary(t), "restore", "--from", image, "--data-dir", restored).CombinedOutput(); err == nil {
		t.Fatalf("restore into a data directory in use succeeded:\n%s", out)
	}
}

// checkReturned: the ticket lost, handed out by the lost node after the
// backup, is placed once it comes back: its position then stays ahead of
// every later join.
func checkReturned(t *testing.T, s *server, lost string) {
	t.Helper()
	var again, j map[string]any
	placed := testwait.Poll(30*time.Second, 200*time.Millisecond, func() bool {
		st, m := s.call("GET", "/queue/onsale/status?ticket="+lost, "", nil)
		if st != 200 || m["admitted"] != false {
			t.Fatalf("a ticket of the jump after the restore: %d %v", st, m)
		}
		if st, j = s.call("POST", "/queue/onsale/join", "", nil); st != 200 {
			t.Fatalf("join: %d %v", st, j)
		}
		_, again = s.call("GET", "/queue/onsale/status?ticket="+lost, "", nil)
		return again["ahead"].(float64) < j["ahead"].(float64)
	})
	if !placed {
		t.Fatalf("the ticket of the jump was not placed within 30 s: %v, a later join %v", again, j)
	}
}

// backupUnderLoad runs `aditus-queue backup` with args while visitors join
// room onsale of s, then joins on past what the image can know and stops
// s. It returns the load and the ticket of a visitor who was waiting when
// the backup was taken.
func backupUnderLoad(t *testing.T, s *server, args ...string) (*joinLoad, string) {
	t.Helper()
	load := startJoinLoad(s.base, "onsale")
	waitJoins(t, load, 1000)
	waiting := load.lastTicket()
	out, err := exec.Command(testbin.Binary(t), append([]string{"backup"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	t.Logf("%s", out)
	joinPast(t, load)
	load.end()
	s.Term()
	return load, waiting
}

// joinPast joins for three seconds and 500 joins more: past the blocks
// the image had reserved (about a second of joins each, at most two ahead).
func joinPast(t *testing.T, l *joinLoad) {
	t.Helper()
	n := l.joins() + 500
	time.Sleep(3 * time.Second)
	waitJoins(t, l, n)
}

// checkJumped checks that restore's output names the room and that the
// ticket lost, of the lost node, is a number of the jump: above every
// number the image knew of.
func checkJumped(t *testing.T, out, lost string) {
	t.Helper()
	m := regexp.MustCompile(`onsale +numbers known up to (\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("restore did not name the room:\n%s", out)
	}
	known, _ := strconv.ParseUint(m[1], 10, 64)
	b, err := base64.RawURLEncoding.DecodeString(lost)
	if err != nil || len(b) < 8 {
		t.Fatalf("ticket %q: %v", lost, err)
	}
	if n := be.BigEndian.Uint64(b[:8]); n <= known {
		t.Fatalf("the lost node's last number %d is not above the %d the image knew of", n, known)
	}
}

func waitJoins(t *testing.T, l *joinLoad, n int) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for l.joins() < n {
		select {
		case <-l.grew:
		case <-deadline:
			t.Fatalf("only %d joins of %d within a minute", l.joins(), n)
		}
	}
}
