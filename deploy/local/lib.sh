# lib.sh — the shell functions the scripts of deploy/ share: messages,
# processes, locks, packages and the Kafka broker. Sourced, never run:
#
#   source "$(dirname "$0")/lib.sh"
#
# Messages name the script that sourced this file (${0##*/}).

lib_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# die prints its arguments after the script's name on stderr and exits 1.
die() {
	echo "${0##*/}: $*" >&2
	exit 1
}

# live_pid FILE PATTERN prints the pid FILE holds when it names a live
# process whose command line holds PATTERN (a recycled pid of some other
# process does not count).
live_pid() {
	local p
	[[ -f $1 ]] || return 1
	p=$(<"$1")
	[[ $p =~ ^[0-9]+$ && -r /proc/$p/cmdline ]] || return 1
	tr '\0' ' ' <"/proc/$p/cmdline" | grep -qF -- "$2" || return 1
	echo "$p"
}

# answers PORT is true when something listens on 127.0.0.1:PORT.
answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# wait_exit NAME PID DEADLINE GRACE waits for PID, sent SIGTERM GRACE
# seconds before DEADLINE (in SECONDS), to exit; SIGKILL once DEADLINE is
# reached.
wait_exit() {
	local name=$1 p=$2 deadline=$3 grace=$4
	while kill -0 "$p" 2>/dev/null; do
		if ((SECONDS >= deadline)); then
			echo "${0##*/}: $name (pid $p) ignored SIGTERM for ${grace}s; killing it" >&2
			kill -KILL "$p" 2>/dev/null || true
		fi
		sleep 0.1
	done
}

# locked_by FD FILE CMD… runs CMD holding an exclusive lock on FILE through
# descriptor FD, waiting at most 120 s for it: one start or stop at a time.
# Processes CMD starts must close FD (FD>&-), or they hold the lock.
locked_by() {
	local fd=$1 file=$2
	shift 2
	mkdir -p "$(dirname "$file")"
	eval "exec $fd>\"\$file\""
	flock -w 120 "$fd" || die "another ${0##*/} holds $file"
	"$@"
}

# install_missing PKG… installs the Debian packages named (none: nothing),
# as root; anyone else is told which to install.
install_missing() {
	(($#)) || return 0
	echo "== installing $*"
	if [[ $(id -u) -ne 0 ]]; then
		die "needs $*; run as root or install them (apt-get install $*)"
	fi
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# start_kafka starts a broker on AQ_KAFKA_PORT with kafka.sh unless one runs
# there, sets started_kafka when it started one (stop_kafka stops it
# again), and exports AQ_KAFKA_BROKERS.
start_kafka() {
	if ! "$lib_dir/kafka.sh" status >/dev/null 2>&1; then
		"$lib_dir/kafka.sh" start
		started_kafka=1
	fi
	export AQ_KAFKA_BROKERS=127.0.0.1:$AQ_KAFKA_PORT
}

# stop_kafka stops the broker start_kafka started, if it did.
stop_kafka() {
	if [[ -n ${started_kafka:-} ]]; then
		"$lib_dir/kafka.sh" stop || true
	fi
}
