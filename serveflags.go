package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/transport/ws"
)

// flagRow is one flag of a command's table: its name, its default, its help
// and where its value goes (exactly one of str, num and on).
type flagRow struct {
	name, def, help string
	str             *string
	num             *int
	on              *bool
}

func strFlag(p *string, name, def, help string) flagRow {
	return flagRow{name: name, def: def, help: help, str: p}
}

func intFlag(p *int, name string, def int, help string) flagRow {
	return flagRow{name: name, def: strconv.Itoa(def), help: help, num: p}
}

func boolFlag(p *bool, name string, def bool, help string) flagRow {
	return flagRow{name: name, def: strconv.FormatBool(def), help: help, on: p}
}

// rawServeFlags are serve's flags whose text is parsed after the flag set.
type rawServeFlags struct {
	upstreamTimeout, minFree, retention, gcFloor string
}

// serveFlagRows is serve's table of flags, in the order --help lists them.
func serveFlagRows(c *serveConfig, raw *rawServeFlags) []flagRow {
	return []flagRow{
		strFlag(&c.Addr, "addr", ":8080", "HTTP listen address"),
		strFlag(&c.PublicURL, "public-url", "", "base of the links the server hands out, as visitors reach it (default: none; redirects are then relative, embed.js and the console use their own origin)"),
		strFlag(&c.DataDir, "data-dir", "./data", "embedded log and master key"),
		strFlag(&c.Log, "log", "file", "event log: file (embedded, one node) or kafka"),
		strFlag(&c.KafkaBrokers, "kafka-brokers", "", "comma-separated host:port of the Kafka brokers"),
		intFlag(&c.KafkaPartitions, "kafka-partitions", 8, "partitions of the events topic when it is created"),
		intFlag(&c.KafkaReplication, "kafka-replication", 1, "replication factor of the topics when they are created"),
		strFlag(&c.KafkaEventsTopic, "kafka-events-topic", "aditus-queue.events", "Kafka topic of the rooms' events; every member of a cluster needs the same"),
		strFlag(&c.KafkaSnapshotsTopic, "kafka-snapshots-topic", "aditus-queue.snapshots", "compacted Kafka topic of the rooms' snapshots"),
		strFlag(&c.AdminToken, "admin-token", "", "the operator's bearer token (default: generated and printed once on first start)"),
		strFlag(&c.Roles, "roles", "front,actor", "roles of this node: front, actor or both"),
		strFlag(&c.MasterKey, "master-key", "", "64 hex chars or base64 master key sealing secrets (default: <data-dir>/master.key); every node of a cluster needs the same"),
		strFlag(&c.LogFormat, "log-format", "text", "log format: text or json"),
		strFlag(&c.LogLevel, "log-level", "info", "log level: debug, info, warn, error"),
		strFlag(&c.OpsAddr, "ops-addr", "127.0.0.1:9090", "operations listener: /metrics, /queue/healthz, and net/http/pprof when on loopback"),
		strFlag(&c.ClusterHost, "cluster-host", "127.0.0.1", "address the cluster endpoint binds"),
		intFlag(&c.ClusterPort, "cluster-port", 0, "port of the cluster endpoint (0: any free port)"),
		strFlag(&c.ClusterAdvertise, "cluster-advertise", "", "address other members dial (default: cluster-host)"),
		strFlag(&c.ClusterHealth, "cluster-health", "", "host:port of this member's cluster health endpoint (default: cluster-host, any port)"),
		strFlag(&c.Peers, "peers", "", "comma-separated cluster health addresses of every member (default: this node alone)"),
		intFlag(&c.LoadTestMaxRate, "loadtest-max-rate", 5000, "most requests per second a load test may send"),
		intFlag(&c.LoadTestMaxSeconds, "loadtest-max-seconds", 600, "longest a load test may last, in seconds"),
		intFlag(&c.MaxPageSockets, "max-page-sockets", ws.DefaultPerNode, "most waiting-page WebSockets this node holds; beyond it pages poll (each socket is an open file)"),
		intFlag(&c.RoomWriteQueue, "room-write-queue", grain.DefaultWriteQueue, "most bypass-code redemptions and changes a room queues for its log; beyond it they are answered 503 busy"),
		boolFlag(&c.AllowPrivateHealthURLs, "allow-private-health-urls", false, "let autoRate health URLs reach loopback, private and link-local addresses"),
		strFlag(&c.ProxyConfig, "proxy-config", "", "HCL file of capacity rooms: also run the enforcing reverse proxy (see aditus-queue proxy)"),
		strFlag(&c.ProxyAddr, "proxy-addr", ":8081", "listen address of the reverse proxy with --proxy-config"),
		strFlag(&c.ProxyVisitorServer, "proxy-visitor-server", "fast", "the reverse proxy's server facing visitors: fast (fasthttp's server; bodies up to 1 MB, headers up to 128 KB) or std (net/http's; streamed bodies, 1 MB of headers)"),
		strFlag(&c.ProxyUpstreamClient, "proxy-upstream-client", "fast", "how the reverse proxy reaches upstreams: fast (pooled connections, fasthttp's client) or std (net/http/httputil)"),
		strFlag(&raw.upstreamTimeout, "proxy-upstream-timeout", "60s", "the reverse proxy's bound on connecting to an upstream, awaiting its answer and its silence within a body (504 beyond)"),
		strFlag(&c.TrustedProxies, "trusted-proxies", "", "comma-separated CIDRs of proxies whose X-Forwarded-For names the client (default: none)"),
		strFlag(&c.BeaconURL, "beacon-url", "", "drand HTTP endpoint of one chain (e.g. https://api.drand.sh/<chain hash>): committed draws mix in its round due after the pre-queue closes (default: none)"),
		intFlag(&c.BeaconWaitSeconds, "beacon-wait", 30, "seconds a draw waits for its beacon round past the round's time before it is made with the key alone"),
		strFlag(&raw.minFree, "min-free-disk", "1GiB", "free space of the embedded log's file system under which new rooms are refused"),
		strFlag(&raw.gcFloor, "gc-heap-floor", "64MiB", "heap size the garbage collector waits for while the live heap is small: after each collection GOGC is raised so that the next comes at this size at the earliest (0: Go's default; a GOGC in the environment turns it off)"),
		strFlag(&raw.retention, "log-retention", "7d", "how long events stay in the log once a snapshot covers them (e.g. 7d, 36h); Kafka: the events topic's retention.ms at creation"),
	}
}

// defineEnvFlags registers rows on fs, each with an environment twin (AQ_ +
// the flag in upper snake case) that replaces its default. It returns the
// first twin that is not a whole number for a number flag: a typo must not
// leave the default silently in force. A boolean twin is on when it is 1 or
// true.
func defineEnvFlags(fs *flag.FlagSet, getenv func(string) string, rows []flagRow) error {
	var envErr error
	for _, r := range rows {
		env := envName(r.name)
		def := r.def
		if v := getenv(env); v != "" {
			def = v
		}
		help := r.help + " (env " + env + ")"
		switch {
		case r.str != nil:
			fs.StringVar(r.str, r.name, def, help)
		case r.num != nil:
			n, err := strconv.Atoi(strings.TrimSpace(def))
			if err != nil {
				if envErr == nil {
					envErr = fmt.Errorf("%s=%q is not a whole number (see aditus-queue serve --help)", env, def)
				}
				n, _ = strconv.Atoi(r.def)
			}
			fs.IntVar(r.num, r.name, n, help)
		case r.on != nil:
			fs.BoolVar(r.on, r.name, def == "1" || strings.EqualFold(def, "true"), help)
		}
	}
	return envErr
}

func envName(flagName string) string {
	return "AQ_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}
