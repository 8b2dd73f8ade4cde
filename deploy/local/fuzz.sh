#!/usr/bin/env bash
# fuzz.sh — a short fuzz run of every Go fuzz target (func FuzzX in a
# _test.go file), one target at a time as `go test -fuzz` requires. Each
# target's seed corpus (f.Add and testdata/fuzz) also runs in the ordinary
# `go test`; this goes further with generated inputs.
#
#   deploy/local/fuzz.sh                 every target, about 10 s each
#   AQ_FUZZ_TIME=1m deploy/local/fuzz.sh  longer
#   deploy/local/fuzz.sh ./actors/room   only the targets of these packages
#
# A failing input is written by go to <package>/testdata/fuzz/<FuzzX>/;
# commit it with the fix, so the regression runs in every `go test`.
set -euo pipefail
cd "$(dirname "$0")/../.."
fuzztime=${AQ_FUZZ_TIME:-10s}

dirs=("$@")
if ((${#dirs[@]} == 0)); then
	mapfile -t dirs < <(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u)
fi

failed=()
n=0
for dir in "${dirs[@]}"; do
	mapfile -t targets < <(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go | sed 's/^func //' | sort -u)
	for t in "${targets[@]}"; do
		n=$((n + 1))
		echo "-- $dir $t ($fuzztime)"
		out=$(go test -run '^$' -fuzz "^$t\$" -fuzztime "$fuzztime" "$dir" 2>&1) && ok=1 || ok=
		# go's fuzzing engine sometimes ends a run that found nothing with
		# "context deadline exceeded" when -fuzztime runs out mid-exchange
		# with a worker: that run is tried once more. A run that found an
		# input always says where it wrote it, and fails at once.
		if [[ -z $ok ]] && ! grep -q 'Failing input written' <<<"$out" && grep -q 'context deadline exceeded' <<<"$out"; then
			echo "   (the fuzzing engine timed out without a finding; once more)"
			out=$(go test -run '^$' -fuzz "^$t\$" -fuzztime "$fuzztime" "$dir" 2>&1) && ok=1 || ok=
		fi
		grep -v '^fuzz: elapsed' <<<"$out" || true
		[[ -n $ok ]] || failed+=("$dir $t")
	done
done
if ((${#failed[@]})); then
	echo "fuzz.sh: ${#failed[@]} of $n targets failed:" >&2
	printf '  %s\n' "${failed[@]}" >&2
	exit 1
fi
echo "fuzz.sh: $n targets, no failure"
