package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/kafkalog"
)

// A backup of a Kafka log is the events topic's records and the latest
// snapshot of each stream, with their streams and offsets, one JSON object
// a line: kafka-events.jsonl (partition by partition, in offset order) and
// kafka-snapshots.jsonl. `restore` loads it into any empty log, Kafka or
// embedded (loadImage).
const (
	imageEvents    = "kafka-events.jsonl"
	imageSnapshots = "kafka-snapshots.jsonl"
	// imageBatchSize bounds the records of one stream appended at once.
	imageBatchSize = 256
)

// imageLine is one record or snapshot of an image.
type imageLine struct {
	Stream string `json:"stream"`
	Offset int64  `json:"offset"`
	Data   []byte `json:"data"`
}

// kafkaFlags are the flags that name a Kafka log.
type kafkaFlags struct {
	log, brokers, events, snapshots *string
}

func addKafkaFlags(fs *flag.FlagSet) kafkaFlags {
	return kafkaFlags{
		log:       fs.String("log", "file", "event log: file (the data directory's) or kafka"),
		brokers:   fs.String("kafka-brokers", "", "comma-separated host:port of the Kafka brokers"),
		events:    fs.String("kafka-events-topic", "aditus-queue.events", "Kafka topic of the rooms' events"),
		snapshots: fs.String("kafka-snapshots-topic", "aditus-queue.snapshots", "compacted Kafka topic of the rooms' snapshots"),
	}
}

// open opens the Kafka log the flags name; nil when they name the
// embedded log.
func (k kafkaFlags) open(ctx context.Context) (*kafkalog.Log, error) {
	switch *k.log {
	case "file":
		return nil, nil
	case "kafka":
	default:
		return nil, fmt.Errorf("--log must be file or kafka, not %q", *k.log)
	}
	if *k.brokers == "" {
		return nil, errors.New("--log kafka needs --kafka-brokers")
	}
	octx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	l, err := kafkalog.Open(octx, kafkalog.Config{Brokers: strings.Split(*k.brokers, ","), EventsTopic: *k.events, SnapshotsTopic: *k.snapshots})
	if err != nil {
		return nil, fmt.Errorf("kafka at %s: %w", *k.brokers, err)
	}
	return l, nil
}

// exportImage writes the image of l into the new directory to and returns
// the bytes written.
func exportImage(ctx context.Context, l *kafkalog.Log, to string) (int64, error) {
	if err := os.MkdirAll(to, 0o700); err != nil {
		return 0, err
	}
	var total int64
	snaps, err := newImageFile(filepath.Join(to, imageSnapshots))
	if err != nil {
		return 0, err
	}
	events, err := newImageFile(filepath.Join(to, imageEvents))
	if err != nil {
		snaps.close()
		return 0, err
	}
	err = l.Export(ctx, func(stream string, s persistence.Snapshot) error {
		return snaps.add(imageLine{Stream: stream, Offset: s.Offset, Data: s.Data})
	}, func(stream string, r persistence.Record) error {
		return events.add(imageLine{Stream: stream, Offset: r.Offset, Data: r.Data})
	})
	for _, f := range []*imageFile{snaps, events} {
		n, cerr := f.close()
		total += n
		if err == nil {
			err = cerr
		}
	}
	return total, err
}

// imageFile writes image lines and fsyncs them on close.
type imageFile struct {
	f *os.File
	w *bufio.Writer
	e *json.Encoder
	n int64
}

func newImageFile(path string) (*imageFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	return &imageFile{f: f, w: w, e: json.NewEncoder(w)}, nil
}

func (f *imageFile) add(l imageLine) error {
	f.n += int64(len(l.Data))
	return f.e.Encode(l)
}

func (f *imageFile) close() (int64, error) {
	err := f.w.Flush()
	if err == nil {
		err = f.f.Sync()
	}
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	return f.n, err
}

// readImage hands fn every line of an image file, in order.
func readImage(path string, fn func(imageLine) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	d := json.NewDecoder(bufio.NewReaderSize(f, 1<<20))
	for {
		var l imageLine
		if err := d.Decode(&l); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if l.Stream == "" {
			return fmt.Errorf("%s: a line without a stream", path)
		}
		if err := fn(l); err != nil {
			return err
		}
	}
}
