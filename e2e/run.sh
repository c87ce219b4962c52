#!/usr/bin/env bash
# Builds lectern and runs the live-classroom end-to-end tests (e2e/*.test.mjs)
# with headless Chromium (and Firefox for firefox.test.mjs), inside a fresh
# loopback-only network namespace, so no packet can leave 127.0.0.0/8. The
# namespace also has its own PID namespace: when the runner ends (or is
# killed by the time limit) every process in it, the server and the browsers
# included, is killed with it.
#
# Needs: go, node/npm, Debian's chromium and firefox-esr, ffmpeg (ffprobe and
# ffmpeg, for recording.test.mjs), root (or CAP_SYS_ADMIN) for unshare.
# Environment: E2E_TIMEOUT (seconds for the whole test run, default 900),
# CHROMIUM, FIREFOX (browser paths, default: chromium and firefox-esr on
# PATH), E2E_TESTS (files, default: every e2e/*.test.mjs), LECTERN_BIN (a
# lectern binary to test instead of building one).
set -euo pipefail
cd "$(dirname "$0")/.."

now() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) / 1e9 }'; }
t_start=$(now)
timings=()
phase_done() { local t; t=$(now); timings+=("$1 $(secs "$2" "$t")s"); echo "e2e: $1 done in $(secs "$2" "$t")s"; }

t=$(now)
if [ -n "${LECTERN_BIN:-}" ]; then
  LECTERN_BIN=$(realpath "$LECTERN_BIN")
  echo "e2e: testing $LECTERN_BIN (not built here)"
else
  mkdir -p e2e/.bin
  go build -o e2e/.bin/lectern ./cmd/lectern
  LECTERN_BIN=$PWD/e2e/.bin/lectern
  phase_done "go build" "$t"
fi
export LECTERN_BIN

t=$(now)
(cd e2e && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
phase_done "npm ci" "$t"

CHROMIUM=${CHROMIUM:-$(command -v chromium || true)}
if [ -z "$CHROMIUM" ]; then
  echo "e2e: chromium not found; install it with: apt-get install -y chromium" >&2
  exit 1
fi
export CHROMIUM

tests=${E2E_TESTS:-$(ls e2e/*.test.mjs | tr '\n' ' ')}
case " $tests " in
  *firefox.test.mjs*)
    FIREFOX=${FIREFOX:-$(command -v firefox-esr || true)}
    if [ -z "$FIREFOX" ]; then
      echo "e2e: firefox-esr not found (firefox.test.mjs needs it); install it with: apt-get install -y firefox-esr" >&2
      exit 1
    fi
    export FIREFOX
    ;;
esac
case " $tests " in
  *recording.test.mjs*)
    for tool in ffprobe ffmpeg; do
      if ! command -v "$tool" >/dev/null; then
        echo "e2e: $tool not found (recording.test.mjs needs it); install it with: apt-get install -y ffmpeg" >&2
        exit 1
      fi
    done
    ;;
esac

rm -rf e2e/artifacts
mkdir -p e2e/artifacts
# The server's data dir and the browsers' profiles go to a temporary
# directory that is removed at the end, whatever happens.
E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/lectern-e2e.XXXXXX")
trap 'rm -rf "$E2E_TMP"' EXIT
export TMPDIR=$E2E_TMP

t=$(now)
status=0
# shellcheck disable=SC2086
timeout --kill-after=15 "${E2E_TIMEOUT:-900}" \
  unshare --net --pid --fork --kill-child --mount-proc \
  sh -c 'ip link set lo up && exec node --test --test-reporter=spec --test-concurrency=1 "$@"' e2e $tests \
  || status=$?
phase_done "browser tests" "$t"
if [ "$status" = 124 ] || [ "$status" = 137 ]; then
  echo "e2e: the test run hit the ${E2E_TIMEOUT:-900} s limit and was stopped" >&2
fi

echo "e2e: timings: ${timings[*]}; total $(secs "$t_start" "$(now)")s"
echo "e2e: artifacts (screenshots, server and browser logs) in e2e/artifacts/"
exit "$status"
