package room

import "github.com/aditus-queue/aditus-queue/actors/versioned"

// Features of a room's events that came after their first form, each with
// the release that brought it. An event that uses one names it in its
// needs (Event.Needs); a reader that does not know a feature refuses the
// room rather than read the event without it (versioned.CheckNeeds), and a
// room writes such an event only once every node of the cluster announces
// the feature (actors/grain, capabilities.go). Adding a feature: a name
// here, its use in Event.needs, a line in docs/architecture.md
// ("Upgrades") and in CHANGELOG.md.
const (
	// FeatureModes: Config.Mode other than queue (soldOut, maintenance,
	// passthrough, queueAll). A reader without it takes a sold-out room
	// for an open one and admits.
	FeatureModes = "modes"
	// FeatureEvents: scheduled events (Config.Events) and the phase
	// written with them. A reader without it keeps the room's own rate and
	// mode through an event.
	FeatureEvents = "events"
	// FeatureRestore: a restore's jump (the restored event, View.Jumps)
	// and the places of its numbers that came back (the returned event).
	// A reader without it counts the jump's numbers as places and admits
	// the whole line at once.
	FeatureRestore = "restore"
)

// Features maps every feature this release reads to the release that
// brought it.
var Features = map[string]string{
	FeatureModes:   "0.4.0",
	FeatureEvents:  "0.4.0",
	FeatureRestore: "0.5.0",
}

// ConfigFeatures lists the features a configuration needs, sorted.
func ConfigFeatures(c *Config, p Phase) []string {
	var out []string
	if len(c.Events) > 0 || p != (Phase{}) {
		out = append(out, FeatureEvents)
	}
	if c.Mode != "" && c.Mode != ModeQueue {
		out = append(out, FeatureModes)
	}
	return out
}

// ViewNeeds is the features a room's state needs (its snapshot): those of
// the configuration in force and of the operator's under an event, with
// their releases; nil for none.
func ViewNeeds(v *View) map[string]string {
	fs := ConfigFeatures(&v.Config, v.Phase)
	if v.Base != nil {
		fs = append(fs, ConfigFeatures(v.Base, Phase{})...)
	}
	if len(v.Jumps) > 0 {
		fs = append(fs, FeatureRestore)
	}
	return needsOf(fs)
}

// CheckNeeds refuses what needs a feature this release lacks (what names
// it in the error: "snapshot").
func CheckNeeds(needs map[string]string, what string) error {
	return versioned.CheckNeeds(needs, Features, what)
}

// NeededFeatures lists the features e uses, sorted.
func (e *Event) NeededFeatures() []string {
	switch {
	case e.Created != nil:
		return ConfigFeatures(&e.Created.Config, e.Created.Phase)
	case e.Configured != nil:
		return ConfigFeatures(&e.Configured.Config, e.Configured.Phase)
	case e.Restored != nil, e.Returned != nil:
		return []string{FeatureRestore}
	}
	return nil
}

// needs is the features e uses, with their releases; nil for none.
func (e *Event) needs() map[string]string { return needsOf(e.NeededFeatures()) }

func needsOf(fs []string) map[string]string {
	if len(fs) == 0 {
		return nil
	}
	out := make(map[string]string, len(fs))
	for _, f := range fs {
		out[f] = Features[f]
	}
	return out
}

// checkNeeds refuses an event that needs a feature this release lacks.
func (e *Event) checkNeeds() error {
	return versioned.CheckNeeds(e.Needs, Features, "event")
}
