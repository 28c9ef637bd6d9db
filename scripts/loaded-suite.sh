#!/bin/sh
# The suite on a busy machine: runs `npm test` (or the vitest paths given) N times in a
# row with a CPU hog beside it, a `nice -n 0` busy loop on each core, and reports each
# run's exit code and duration. A newcomer's laptop and CI runners are busy machines;
# a test whose bound a busy machine breaks is a bug in the test (docs/testing.md,
# "The suite on a busy machine").
#
#   scripts/loaded-suite.sh [-n RUNS] [-j HOGS] [-l LOGDIR] [vitest paths...]
#
#   -n RUNS   how many runs in a row (default 3)
#   -j HOGS   busy loops beside it (default: one per core, from nproc)
#   -l LOGDIR where each run's output goes (default: a new directory under ${TMPDIR:-/tmp})
#   paths     given: `npx vitest run <paths>` instead of the whole `npm test`
#
# Exits 0 only if every run passed. The hogs are stopped on every exit, Ctrl-C included.
set -u

runs=3
hogs=$(nproc 2>/dev/null || echo 2)
logdir=""
while getopts "n:j:l:h" option; do
  case "$option" in
    n) runs=$OPTARG ;;
    j) hogs=$OPTARG ;;
    l) logdir=$OPTARG ;;
    *) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
case "$runs" in '' | *[!0-9]* | 0) echo "loaded-suite: -n must be a whole number of runs, at least 1 (got '$runs')" >&2; exit 2 ;; esac
case "$hogs" in '' | *[!0-9]*) echo "loaded-suite: -j must be a whole number of busy loops (got '$hogs'); 0 runs without a hog" >&2; exit 2 ;; esac

cd "$(dirname "$0")/.." || exit 2
[ -n "$logdir" ] || logdir=$(mktemp -d "${TMPDIR:-/tmp}/loaded-suite.XXXXXX")
mkdir -p "$logdir" || exit 2

hog_pids=""
stop_hogs() {
  for pid in $hog_pids; do kill "$pid" 2>/dev/null; done
  hog_pids=""
}
trap 'stop_hogs' EXIT
trap 'stop_hogs; exit 130' INT TERM

i=0
while [ "$i" -lt "$hogs" ]; do
  nice -n 0 sh -c 'while :; do :; done' &
  hog_pids="$hog_pids $!"
  i=$((i + 1))
done

if [ "$#" -gt 0 ]; then what="npx vitest run $*"; else what="npm test"; fi
echo "loaded-suite: $runs run(s) of '$what' with $hogs busy loop(s) beside it; logs in $logdir"
failed=0
run=1
while [ "$run" -le "$runs" ]; do
  log="$logdir/run-$run.log"
  started=$(date +%s)
  if [ "$#" -gt 0 ]; then npx vitest run "$@" >"$log" 2>&1; else npm test >"$log" 2>&1; fi
  code=$?
  seconds=$(( $(date +%s) - started ))
  if [ "$code" -eq 0 ]; then
    echo "run $run: passed in ${seconds} s"
  else
    failed=$((failed + 1))
    echo "run $run: FAILED (exit $code) after ${seconds} s; failing tests:"
    grep -E '^ *(FAIL|×) ' "$log" | sed 's/^/    /' | head -40
  fi
  run=$((run + 1))
done
uptime_line=$(uptime 2>/dev/null || true)
echo "loaded-suite: $((runs - failed)) of $runs run(s) passed; machine: $uptime_line"
[ "$failed" -eq 0 ]
