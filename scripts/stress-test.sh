#!/usr/bin/env bash
# Run the tests beside a CPU hog, to find what only fails on a loaded machine.
# Arguments go to pytest (default: the whole suite), e.g.
#   scripts/stress-test.sh tests/auth/test_conformance.py -x
# PORTICO_STRESS_LOAD: the number of busy processes (default: 3 per core, which brings
# the load average to about 6 on 2 cores). They run at normal priority: a hog at nice 19
# would step aside and the tests would not feel the load.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-.venv/bin/python}
cores=$(nproc)
hogs=${PORTICO_STRESS_LOAD:-$((3 * cores))}
pids=()

stop_hogs() {
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  wait "${pids[@]}" 2>/dev/null || true
}
trap stop_hogs EXIT
trap 'exit 130' INT TERM

for _ in $(seq "$hogs"); do
  ( while :; do :; done ) &
  pids+=("$!")
done
echo "stress: $hogs busy processes on $cores cores; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2

export QT_QPA_PLATFORM=offscreen
status=0
"$PYTHON" -m pytest -p no:cacheprovider "$@" || status=$?
echo "stress: load at the end $(cut -d' ' -f1-3 /proc/loadavg)" >&2
exit "$status"
