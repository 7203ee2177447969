#!/usr/bin/env bash
# Regenerates the tables of docs/BENCHMARKS.md: builds switchboard, runs every
# bench with its defaults (plus the goal-sized runs the page quotes) and prints
# the Markdown to stdout. Usage: scripts/benchmarks.sh > /tmp/tables.md
# Set ROUNDS to change the rounds (default 5); FULL=0 skips the long runs
# (100k calls, 1M scheduled deliveries). Progress goes to stderr. Each bench's
# heading gives the load average as it starts: on a shared machine it says how far
# to trust the absolute figures.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${ROUNDS:-5}"
bin="$(mktemp -d)/switchboard"
go build -o "$bin" ./cmd/switchboard
trap 'rm -rf "$(dirname "$bin")"' EXIT

run() {
	echo
	echo "\`switchboard bench $* --rounds $rounds\` (load average $(cut -d' ' -f1-3 /proc/loadavg))"
	echo
	"$bin" bench "$@" --rounds "$rounds" --markdown
}

echo "Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)," \
	"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(uname -sr), $(go version | cut -d' ' -f3)."
echo "Date: $(date -u '+%Y-%m-%d %H:%M UTC'). Commit: $(git rev-parse --short HEAD)."
run hooks
run ws
run calls
run outbox
run outbox --sync NORMAL
if [ -n "${SWITCHBOARD_TEST_DATABASE_URL:-}" ]; then
	run outbox --database-url "$SWITCHBOARD_TEST_DATABASE_URL"
	run outbox --database-url "$SWITCHBOARD_TEST_DATABASE_URL" --nodes 2
fi
run backlog
if [ "${FULL:-1}" != 0 ]; then
	# One round: several rounds at 100k lose a few connections (docs/BENCHMARKS.md).
	echo
	echo "\`switchboard bench calls --calls 100000 --rounds 1\`"
	echo
	"$bin" bench calls --calls 100000 --rounds 1 --markdown
	run backlog --scheduled 1000000
fi
