package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/internal/testbin"
)

// kafkaTopics are flags naming topics of their own for one test.
func kafkaTopics(brokers, name string) []string {
	return []string{"--log", "kafka", "--kafka-brokers", brokers,
		"--kafka-events-topic", name + ".events", "--kafka-snapshots-topic", name + ".snapshots"}
}

// A backup of a Kafka log taken while visitors join, restored into an
// embedded log and into empty Kafka topics after more joins: each restored
// node hands out numbers above every number handed out before, tickets
// and keys from before still work, and the line is kept.
func TestBackupRestoreKafka(t *testing.T) {
	brokers := os.Getenv("AQ_KAFKA_BROKERS")
	if brokers == "" {
		t.Skip("AQ_KAFKA_BROKERS is not set: this test needs a real Kafka broker (deploy/local/kafka.sh start; AQ_KAFKA_BROKERS=127.0.0.1:9092)")
	}
	run := fmt.Sprintf("aq-backup-%d", time.Now().UnixNano())
	dir, image := t.TempDir(), filepath.Join(t.TempDir(), "backup")
	const admin = "backup-admin-token-of-24-chars"
	s := startServer(t, dir, testbin.FreeAddr(t), append(kafkaTopics(brokers, run), "--admin-token", admin)...)
	s.createOnSale(admin)
	load, waiting := backupUnderLoad(t, s, append([]string{"--data-dir", dir, "--to", image}, kafkaTopics(brokers, run)...)...)
	before, lost, first := load.max, load.last, load.tickets[0]

	into := map[string][]string{
		"embedded log": nil,
		"empty topics": kafkaTopics(brokers, run+"-restored"),
	}
	for name, flags := range into {
		t.Run(name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			out, err := exec.Command(testbin.Binary(t), append([]string{"restore", "--from", image, "--data-dir", data}, flags...)...).CombinedOutput()
			if err != nil {
				t.Fatalf("restore: %v\n%s", err, out)
			}
			t.Logf("%s", out)
			checkJumped(t, string(out), lost)
			s2 := startServer(t, data, testbin.FreeAddr(t), append(flags, "--admin-token", admin)...)
			s2.joinAbove("the restore", before)
			if st, m := s2.call("GET", "/queue/onsale/status?ticket="+waiting, "", nil); st != 200 || m["admitted"] != false {
				t.Fatalf("a visitor waiting in the image after the restore: %d %v", st, m)
			}
			if st, m := s2.call("POST", "/queue/onsale/token", "", map[string]any{"ticket": first}); st != 200 {
				t.Fatalf("token for a ticket from before the backup: %d %v", st, m)
			}
			checkReturned(t, s2, lost)
			s2.Term()
			if flags != nil {
				// The topics now hold the room: a second restore into them fails.
				out, err := exec.Command(testbin.Binary(t), append([]string{"restore", "--from", image, "--data-dir", filepath.Join(t.TempDir(), "d")}, flags...)...).CombinedOutput()
				if err == nil || !strings.Contains(string(out), "empty log") {
					t.Fatalf("restore into topics in use: %v\n%s", err, out)
				}
			}
		})
	}
}
