package kafkalog

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"
)

// retentionMS is the events topic's retention.ms for a retention window:
// -1 (for ever) for zero.
func retentionMS(d time.Duration) string {
	if d <= 0 {
		return "-1"
	}
	return strconv.FormatInt(d.Milliseconds(), 10)
}

// checkRetention compares the events topic's retention.ms with the
// configured window. A topic created earlier, or changed by hand, keeps its
// own: the difference is logged as a warning (the broker's setting is what
// holds), never changed behind the operator's back.
func (l *Log) checkRetention(ctx context.Context) {
	want := retentionMS(l.cfg.Retention)
	got, err := l.topicConfig(ctx, l.cfg.EventsTopic, "retention.ms")
	if err != nil {
		l.cfg.Logger.Warn("cannot read the events topic's retention.ms", "topic", l.cfg.EventsTopic, "error", err)
		return
	}
	if got != want {
		l.cfg.Logger.Warn("the events topic's retention differs from --log-retention: the topic's holds",
			"topic", l.cfg.EventsTopic, "topic_retention_ms", got, "configured_retention_ms", want,
			"fix", fmt.Sprintf("kafka-configs.sh --alter --entity-type topics --entity-name %s --add-config retention.ms=%s", l.cfg.EventsTopic, want))
	}
}

// topicConfig reads one configuration value of a topic.
func (l *Log) topicConfig(ctx context.Context, topic, name string) (string, error) {
	res, err := l.client.DescribeConfigs(ctx, &kafka.DescribeConfigsRequest{Resources: []kafka.DescribeConfigRequestResource{{
		ResourceType: kafka.ResourceTypeTopic, ResourceName: topic, ConfigNames: []string{name}}}})
	if err != nil {
		return "", err
	}
	for _, r := range res.Resources {
		if r.Error != nil {
			return "", r.Error
		}
		for _, e := range r.ConfigEntries {
			if e.ConfigName == name {
				return e.ConfigValue, nil
			}
		}
	}
	return "", fmt.Errorf("topic %s has no %s", topic, name)
}
