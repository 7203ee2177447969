#!/usr/bin/env bash
# Runs the README's five-minute tour as a new user would: in a fresh clone of the
# repository's HEAD, every command of the tour's sh blocks (those between the
# <!-- tour --> and <!-- /tour --> markers) exactly as written, top to bottom in one
# shell, the build and a real `switchboard serve` included. Any command that fails
# fails the run. .ci/run runs it.
#
# The tour listens on fixed ports (3000, 8080), as a reader's copy-paste does. Run as
# root with unshare(1) it gets a network namespace of its own, where those ports are
# free whatever else runs on the machine (and nothing outside loopback is reachable:
# the Go module cache must hold the modules, as it does once the tree was built).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/switchboard-tour-XXXXXX")
trap 'rm -rf "$work"' EXIT

git clone --quiet --no-hardlinks "$repo" "$work/switchboard"
awk '
	/<!-- tour -->/ { on = 1; next }
	/<!-- \/tour -->/ { on = 0 }
	on && /^```sh$/ { block = 1; next }
	block && /^```$/ { block = 0; print ""; next }
	block { print }
' "$work/switchboard/README.md" >"$work/tour.sh"
[ -s "$work/tour.sh" ] || { echo "the README has no tour between <!-- tour --> and <!-- /tour -->"; exit 1; }

{
	echo 'set -euo pipefail'
	# Whatever the tour left in the background is stopped when it ends, pass or fail.
	echo 'trap '"'"'kill $(jobs -p) 2>/dev/null || true'"'"' EXIT'
	echo 'set -x'
	cat "$work/tour.sh"
} >"$work/run.sh"

cd "$work/switchboard"
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null 2>&1 && unshare --net true 2>/dev/null; then
	unshare --net bash -c 'ip link set lo up && exec bash "$0"' "$work/run.sh"
else
	echo "(no network namespace: the tour uses this machine's ports 3000 and 8080)"
	bash "$work/run.sh"
fi
echo "the README's tour ran, every command as written"
