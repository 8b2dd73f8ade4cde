#!/usr/bin/env bash
# kafka.sh start|stop|status — a single-node Apache Kafka broker for development
# and tests: KRaft mode (process.roles=broker,controller), listening on 127.0.0.1
# only.
#
# Broker version: Apache Kafka 4.4.0, the newest release on Maven Central. Kafka
# 4 removed old protocol versions (KIP-896); every kafka-go v0.4.51 call that
# persistence/kafkalog makes was tested against it and works: CreateTopics,
# Metadata, Produce with acks=all and ListOffsets through kafka.Client, and
# through kafka.Conn the leader lookup (Metadata v6), ListOffsets v1 and Fetch
# v10 (ReadBatch). Kafka 3.9.x (the last line serving every old version) also
# works with this script: AQ_KAFKA_VERSION=3.9.1.
#
# Apache Kafka has no Debian package: the broker's jars come from Maven Central
# (mvn dependency:copy-dependencies on a small generated pom) and are cached, so
# only the first start downloads anything.
#
# Environment:
#   AQ_KAFKA_VERSION          broker version (default below; 3.x and 4.x both work)
#   AQ_KAFKA_PORT             client port (default 9092)
#   AQ_KAFKA_CONTROLLER_PORT  KRaft controller port (default client port + 1)
#   AQ_KAFKA_HOME             jar cache (default ~/.cache/aditus-queue/kafka-<version>)
#   AQ_KAFKA_DATA             data, config, pid and logs (default <home>/data)
#   AQ_KAFKA_HEAP             JVM heap (default 512m)
#   AQ_KAFKA_START_TIMEOUT    seconds start waits for the broker to answer (default 90)
#   AQ_KAFKA_RETENTION_CHECK_MS  how often the broker drops expired segments
#                             (default 300000, Kafka's; the tests use 1000)
#   JAVA_HOME                 Java runtime to use (default: java on PATH; 17 or newer)
set -euo pipefail

VERSION=${AQ_KAFKA_VERSION:-4.4.0}
PORT=${AQ_KAFKA_PORT:-9092}
CONTROLLER_PORT=${AQ_KAFKA_CONTROLLER_PORT:-$((PORT + 1))}
KHOME=${AQ_KAFKA_HOME:-$HOME/.cache/aditus-queue/kafka-$VERSION}
DATA=${AQ_KAFKA_DATA:-$KHOME/data}
HEAP=${AQ_KAFKA_HEAP:-512m}
START_TIMEOUT=${AQ_KAFKA_START_TIMEOUT:-90}
RETENTION_CHECK_MS=${AQ_KAFKA_RETENTION_CHECK_MS:-300000}

JAVA_BIN=${JAVA_HOME:+$JAVA_HOME/bin/}java

LIBS=$KHOME/libs
PIDFILE=$DATA/kafka.pid
CONFIG=$DATA/server.properties
LOGDIR=$DATA/logs
LOG=$LOGDIR/server.log

# shellcheck source=deploy/local/lib.sh
source "$(dirname "$0")/lib.sh"

# pid prints the broker's pid when the pid file names a live broker of this
# data directory (a recycled pid of some other process does not count).
pid() { live_pid "$PIDFILE" "kafka.Kafka $CONFIG"; }

# fetch downloads the broker's runtime jars once. Kafka 3.x logs through slf4j 1
# and log4j 1 (reload4j); 4.x moved to log4j 2.
fetch() {
	[[ -f $LIBS/.complete ]] && return 0
	command -v mvn >/dev/null || die "mvn not found (apt-get install maven)"
	local binding
	if [[ $VERSION == 3.* ]]; then
		binding="
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-reload4j</artifactId><version>1.7.36</version></dependency>"
	else
		# Maven mediation picks slf4j-api 1.7 from the broker's tree, which
		# cannot see an slf4j 2 provider: pin slf4j 2.
		binding="
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-api</artifactId><version>2.0.17</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-core</artifactId><version>2.24.3</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j2-impl</artifactId><version>2.24.3</version></dependency>"
	fi
	mkdir -p "$KHOME"
	cat >"$KHOME/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local</groupId>
  <artifactId>kafka-broker-runtime</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>$VERSION</version></dependency>$binding
  </dependencies>
</project>
EOF
	echo "kafka.sh: fetching Apache Kafka $VERSION jars into $LIBS (first start only)"
	rm -rf "$LIBS.tmp"
	if ! mvn -q -B -f "$KHOME/pom.xml" \
		org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies \
		-DincludeScope=runtime -DoutputDirectory="$LIBS.tmp" >"$KHOME/mvn.log" 2>&1; then
		tail -n 30 "$KHOME/mvn.log" >&2
		die "could not fetch the Kafka $VERSION jars (full log: $KHOME/mvn.log)"
	fi
	rm -rf "$LIBS"
	mv "$LIBS.tmp" "$LIBS"
	touch "$LIBS/.complete"
}

write_config() {
	mkdir -p "$DATA/kraft" "$LOGDIR"
	cat >"$CONFIG" <<EOF
# Written by deploy/local/kafka.sh on every start; edits are lost.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$PORT,CONTROLLER://127.0.0.1:$CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$DATA/kraft
# Topics are created by their users, with the settings they need.
auto.create.topics.enable=false
num.partitions=1
default.replication.factor=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
# Sized for a 2-core development machine and a ${HEAP} heap.
num.network.threads=2
num.io.threads=4
background.threads=4
log.cleaner.threads=1
log.cleaner.dedupe.buffer.size=16777216
log.retention.check.interval.ms=$RETENTION_CHECK_MS
EOF
	if [[ $VERSION == 3.* ]]; then
		cat >"$DATA/log4j.properties" <<EOF
log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.RollingFileAppender
log4j.appender.file.File=$LOG
log4j.appender.file.MaxFileSize=10MB
log4j.appender.file.MaxBackupIndex=3
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
EOF
		LOGGING=(-Dlog4j.configuration="file:$DATA/log4j.properties")
	else
		cat >"$DATA/log4j2.xml" <<EOF
<Configuration status="warn">
  <Appenders>
    <RollingFile name="file" fileName="$LOG" filePattern="$LOG.%i">
      <PatternLayout pattern="[%d] %p %m (%c)%n"/>
      <SizeBasedTriggeringPolicy size="10MB"/>
      <DefaultRolloverStrategy max="3"/>
    </RollingFile>
  </Appenders>
  <Loggers>
    <Root level="info"><AppenderRef ref="file"/></Root>
  </Loggers>
</Configuration>
EOF
		LOGGING=(-Dlog4j2.configurationFile="$DATA/log4j2.xml")
	fi
}

# JAVA is the JVM command line shared by the storage tool and the broker.
set_java() {
	JAVA=("$JAVA_BIN" -Xms128m "-Xmx$HEAP" -XX:+UseG1GC -XX:MaxGCPauseMillis=20
		-Djava.awt.headless=true "-Dkafka.logs.dir=$LOGDIR" "${LOGGING[@]}"
		-cp "$LIBS/*")
}

format_storage() {
	[[ -f $DATA/kraft/meta.properties ]] && return 0
	local id
	# A cluster id is 16 random bytes in URL-safe base64 without padding;
	# one that starts with "-" would be read as an option (1 start in 64).
	id=-
	while [[ $id == -* ]]; do
		id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
	done
	echo "kafka.sh: formatting $DATA/kraft (cluster id $id)"
	if ! "${JAVA[@]}" kafka.tools.StorageTool format -t "$id" -c "$CONFIG" >"$LOGDIR/format.log" 2>&1; then
		cat "$LOGDIR/format.log" >&2
		die "storage format failed"
	fi
}

start() {
	local p
	if p=$(pid); then
		echo "kafka.sh: already running (pid $p) on 127.0.0.1:$PORT"
		return 0
	fi
	command -v "$JAVA_BIN" >/dev/null || die "$JAVA_BIN not found (a Java 17 runtime is needed)"
	local major
	major=$("$JAVA_BIN" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1)
	if [[ $VERSION != 3.* ]] && ((${major:-0} < 17)); then
		die "Kafka $VERSION needs Java 17 or newer; $JAVA_BIN is Java ${major:-unknown}"
	fi
	answers "$PORT" && die "127.0.0.1:$PORT is already taken by another process"
	answers "$CONTROLLER_PORT" && die "127.0.0.1:$CONTROLLER_PORT (controller) is already taken by another process"
	fetch
	write_config
	set_java
	format_storage
	: >"$LOG"
	# setsid and closed descriptors: the broker must not hold the caller's
	# terminal, process group, pipes or lock (a test running this script
	# would otherwise wait for the broker to exit).
	setsid "${JAVA[@]}" kafka.Kafka "$CONFIG" </dev/null >"$LOGDIR/kafka.out" 2>&1 9>&- &
	p=$!
	echo "$p" >"$PIDFILE"
	local deadline=$((SECONDS + START_TIMEOUT))
	while ((SECONDS < deadline)); do
		if ! kill -0 "$p" 2>/dev/null; then
			echo "kafka.sh: broker exited during start; last lines of its logs:" >&2
			tail -n 40 "$LOG" "$LOGDIR/kafka.out" >&2 || true
			rm -f "$PIDFILE"
			exit 1
		fi
		# The listener opens before the broker has caught up with its
		# metadata; "Kafka Server started" comes after that.
		if grep -q "Kafka Server started" "$LOG" 2>/dev/null && answers "$PORT"; then
			echo "kafka.sh: Apache Kafka $VERSION running (pid $p) on 127.0.0.1:$PORT, data in $DATA"
			return 0
		fi
		sleep 0.5
	done
	echo "kafka.sh: broker did not answer on 127.0.0.1:$PORT within ${START_TIMEOUT}s; last lines of $LOG:" >&2
	tail -n 40 "$LOG" >&2 || true
	exit 1
}

stop() {
	local p
	if ! p=$(pid); then
		echo "kafka.sh: not running"
		rm -f "$PIDFILE"
		return 0
	fi
	kill -TERM "$p"
	wait_exit broker "$p" $((SECONDS + 60)) 60
	rm -f "$PIDFILE"
	echo "kafka.sh: stopped (pid $p)"
}

status() {
	local p
	if p=$(pid); then
		echo "kafka.sh: running (pid $p) on 127.0.0.1:$PORT, data in $DATA"
		return 0
	fi
	echo "kafka.sh: not running"
	return 1
}

# One start or stop at a time per data directory: tests may call this script
# concurrently.
locked() { locked_by 9 "$DATA/.lock" "$@"; }

case ${1:-} in
start) locked start ;;
stop) locked stop ;;
status) status ;;
*)
	echo "usage: $0 start|stop|status" >&2
	exit 2
	;;
esac
