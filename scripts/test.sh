#!/usr/bin/env bash
# scripts/test.sh: run every check and every test.
#
#   scripts/test.sh                         everything: gofmt, go vet, sqlc diff, go test -race ./...
#   scripts/test.sh -run TestX ./internal/foo/   extra arguments go to `go test`; naming packages
#                                           replaces ./... (the gofmt/vet/sqlc checks still cover
#                                           the whole repository)
#
# Before testing it installs and starts what is missing (scripts/services.sh; as root,
# or through sudo): Postgres and Redis answering on 127.0.0.1, the redis-server and
# stripe-mock binaries (the tests start their own stripe-mock and Redis cluster
# processes), a C compiler (gcc, libc6-dev: -race and sqlc need cgo) and chromium (the
# browser test). Debian packages go in with `apt-get install --no-install-recommends`;
# apt's output goes to artifacts/apt.log (APT_LOG), one line a step here. On a fresh
# Debian 12 with only Go, git and curl, the first run takes 7-20 minutes on 2 cores.
#
# Environment:
#   TEST_DATABASE_URL, TEST_REDIS_URL  used by the tests; when set, this script does not
#                                      start the local Postgres / Redis for them
#   SKIP_CHECKS=1     skip gofmt, go vet and sqlc diff (quick iterations)
#   RACE=0            run without the race detector (then, with SKIP_CHECKS=1 too, no C
#                     compiler is needed or installed)
#   CHROMIUM=0        do not install chromium (the browser test then skips)
#   FUZZ=0            skip the fuzz smoke run (each fuzz target for FUZZ_SMOKE_TIME,
#                     default 500x, i.e. 500 executions, after the tests)
#   TEST_TIMEOUT      go test -timeout (default 20m)
#   TEST_JSON         where to keep go test's JSON event stream (default artifacts/go-test.json)
#   PROGRESS_SECONDS  how often vet, sqlc and go test say they are still at it (default 20):
#                     a first run compiles for minutes
#
# Prints a summary and, last, "tests: N passed, N failed, N skipped". Exits non-zero when
# any step fails.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

# shellcheck source=scripts/services.sh
. "$ROOT/scripts/services.sh"
GOBIN_DIRS=$(_svc_gopath_bins | paste -sd: -)
export PATH="$PATH${GOBIN_DIRS:+:$GOBIN_DIRS}"

if ! command -v go >/dev/null 2>&1; then
	echo "test.sh: go not found (expected /usr/local/go/bin/go)" >&2
	exit 1
fi

say() { printf '\n==> %s\n' "$*"; }
failed_steps=()
step_times=()
step_start=0
begin() { say "$1"; step_start=$SECONDS; }
done_step() { step_times+=("$1 $((SECONDS - step_start))s ($2)"); }
fail_step() {
	failed_steps+=("$1")
	done_step "$1" FAILED
}

total_start=$SECONDS

# --- services ---------------------------------------------------------------
begin "services and tools (Postgres, Redis, stripe-mock, C compiler, chromium)"
services_ok=1
if [[ ${RACE:-1} != 0 || ${SKIP_CHECKS:-0} != 1 ]]; then
	# go test -race and sqlc need cgo, and a minimal Debian has no C compiler.
	ensure_cc || services_ok=0
fi
if [[ -n ${TEST_DATABASE_URL:-} ]]; then
	echo "TEST_DATABASE_URL is set: not checking the local Postgres"
else
	ensure_postgres || services_ok=0
fi
if [[ -n ${TEST_REDIS_URL:-} ]]; then
	echo "TEST_REDIS_URL is set: not checking the local Redis (binaries only)"
	if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
		_svc_apt_install redis-server || services_ok=0
	fi
else
	ensure_redis || services_ok=0
fi
ensure_stripe_mock_bin || services_ok=0
[[ ${CHROMIUM:-1} == 0 ]] || install_chromium # never fails: the browser test skips without it
if ((services_ok)); then
	done_step services ok
else
	fail_step services
	echo "test.sh: the services the tests need are not available (see above); not running the tests" >&2
	echo "tests: 0 passed, 0 failed"
	exit 1
fi
go version

if [[ ${SKIP_CHECKS:-0} != 1 ]]; then
	# --- gofmt ----------------------------------------------------------------
	begin "gofmt -l ."
	if fmt_out=$(gofmt -l . 2>&1); then fmt_rc=0; else fmt_rc=$?; fi
	fmt_out=$(printf '%s\n' "$fmt_out" | grep -Ev '^(tools|vendor)/|(^|/)testdata/' | grep -v '^$' || true)
	if [[ -n $fmt_out || $fmt_rc -ne 0 ]]; then
		printf '%s\n' "$fmt_out"
		echo "gofmt: the files above are not formatted; run: gofmt -w <file>" >&2
		fail_step gofmt
	else
		echo "all formatted"
		done_step gofmt ok
	fi

	# --- go vet -----------------------------------------------------------------
	begin "go vet ./..."
	# -v: the heartbeat counts the packages built (only the count is shown).
	if go_progress "go vet" "a first run compiles every dependency: 2-4 min on 2 cores" go vet -v ./...; then
		echo "no problems"
		done_step vet ok
	else
		fail_step "go vet"
	fi

	# --- sqlc -------------------------------------------------------------------
	begin "sqlc diff (generated code up to date with db/)"
	if [[ -f sqlc.yaml || -f sqlc.yml || -f sqlc.json ]]; then
		heartbeat_start "sqlc diff" "a first run builds sqlc from tools/go.mod: 3-4 min on 2 cores"
		if go tool -modfile=tools/go.mod sqlc diff; then sqlc_rc=0; else sqlc_rc=$?; fi
		heartbeat_stop
		if ((sqlc_rc == 0)); then
			echo "generated code is up to date"
			done_step sqlc ok
		else
			echo "sqlc: internal/db is stale (or sqlc failed); run: go tool -modfile=tools/go.mod sqlc generate" >&2
			fail_step "sqlc diff"
		fi
	else
		echo "no sqlc.yaml: skipped"
		done_step sqlc skipped
	fi
fi

# --- go test ----------------------------------------------------------------
have_pkgs=0
verbose=0
for arg in "$@"; do
	case $arg in
	-v | -v=true | --v | --v=true | -bench* | --bench*) verbose=1 ;; # show all output (benchmark figures)
	-*) ;;
	. | .. | ./* | ../* | *...* | github.com/* | [a-z]*.[a-z]*/*) have_pkgs=1 ;;
	esac
done
test_args=(-count=1 -timeout "${TEST_TIMEOUT:-20m}")
[[ ${RACE:-1} == 0 ]] || test_args=(-race "${test_args[@]}")
test_args+=("$@")
((have_pkgs)) || test_args+=(./...)

TEST_JSON=${TEST_JSON:-$ROOT/artifacts/go-test.json}
mkdir -p "$(dirname "$TEST_JSON")"
counts_file=$(mktemp)
trap 'rm -f "$counts_file" "$counts_file.failures"' EXIT

begin "go test ${test_args[*]}"
# go test -json gives exact counts; the awk below prints what plain `go test` would:
# package results, build errors, and the output of failing tests only (whole, not
# interleaved); with -v or -bench, everything as it comes. The raw event stream stays
# in $TEST_JSON.
# A heartbeat counts the packages finished (a first run compiles for minutes first).
heartbeat_start "go test" "a first run compiles the tests first: 3-6 min on 2 cores" \
	"printf '%s packages finished' \"\$(grep -cE '\"Action\":\"(pass|fail|skip)\",\"Package\":\"[^\"]*\",\"Elapsed\"' '$TEST_JSON')\""
set +e
go test -json "${test_args[@]}" | tee "$TEST_JSON" | awk -v counts="$counts_file" -v verbose="$verbose" '
function hexval(h,   i, n, c) {
	n = 0
	for (i = 1; i <= length(h); i++) {
		c = index("0123456789abcdef", tolower(substr(h, i, 1)))
		n = n * 16 + (c > 0 ? c - 1 : 0)
	}
	return n
}
# jstr(s, key): the decoded value of the JSON string field key in s, or "".
function jstr(s, key,   i, rest, out, c, n) {
	i = index(s, "\"" key "\":\"")
	if (i == 0) return ""
	rest = substr(s, i + length(key) + 4)
	out = ""
	while (rest != "") {
		if (match(rest, /^[^"\\]+/)) {
			out = out substr(rest, 1, RLENGTH)
			rest = substr(rest, RLENGTH + 1)
			continue
		}
		c = substr(rest, 1, 1)
		if (c == "\"") break
		c = substr(rest, 2, 1)
		if (c == "n") out = out "\n"
		else if (c == "t") out = out "\t"
		else if (c == "r") out = out "\r"
		else if (c == "u") {
			n = hexval(substr(rest, 3, 4))
			out = out (n > 0 && n < 128 ? sprintf("%c", n) : "\\u" substr(rest, 3, 4))
			rest = substr(rest, 7)
			continue
		} else out = out c
		rest = substr(rest, 3)
	}
	return out
}
# The output of a test is kept as its pieces (nbuf[key] of them in buf[key, i]), not as
# one string appended to: a test that logs 40,000 lines would make that quadratic, and
# the go test writing into this pipe waits on it.
function flush(key,   j, n, i, lines) {
	if (!(key in nbuf)) return
	for (j = 1; j <= nbuf[key]; j++) {
		n = split(buf[key, j], lines, "\n")
		for (i = 1; i <= n; i++) {
			if (lines[i] ~ /^=== (RUN|PAUSE|CONT|NAME)/) continue
			if (i == n && lines[i] == "") continue
			print lines[i]
		}
	}
	drop(key)
}
function drop(key,   j) {
	for (j = 1; j <= nbuf[key]; j++) delete buf[key, j]
	delete nbuf[key]
}
{
	line = $0
	if (substr(line, 1, 1) != "{") { print line; fflush(); next }
	o = index(line, "\"Output\":\"")
	head = o ? substr(line, 1, o - 1) : line
	action = jstr(head, "Action")
	out = o ? jstr(substr(line, o), "Output") : ""
	if (action == "build-output") { printf "%s", out; fflush(); next }
	if (action == "build-fail") next
	pkg = jstr(head, "Package")
	test = jstr(head, "Test")
	key = pkg SUBSEP test
	if (action == "output") {
		if (verbose) { printf "%s", out; fflush(); next }
		if (test != "") { buf[key, ++nbuf[key]] = out; next }
		if (out == "PASS\n" || out ~ /^=== /) next
		printf "%s", out
		fflush()
		next
	}
	if (test != "") {
		if (action == "pass") { passed++; drop(key) }
		else if (action == "skip") { skipped++; drop(key) }
		else if (action == "fail") { failed++; flush(key); failures[++nf] = pkg " " test; fflush() }
		next
	}
	if (action == "fail" || action == "pass") {
		# Tests left running when a package dies (panic, timeout) have no end
		# event: show what they printed, and count them as failed.
		nk = 0
		for (k in nbuf) {
			split(k, parts, SUBSEP)
			if (parts[1] == pkg) left[++nk] = k
		}
		for (i = 1; i <= nk; i++) {
			k = left[i]
			split(k, parts, SUBSEP)
			if (action == "fail") {
				print "--- (unfinished) " parts[2]
				flush(k)
				failed++
				failures[++nf] = pkg " " parts[2] " (unfinished)"
			} else drop(k)
		}
		if (action == "fail") pkgfailed++
		fflush()
	}
}
END {
	printf "%d %d %d %d\n", passed, failed, skipped, pkgfailed > counts
	for (i = 1; i <= nf && i <= 50; i++) printf "%s\n", failures[i] > (counts ".failures")
}'
status=("${PIPESTATUS[@]}")
set -e
heartbeat_stop
test_rc=${status[0]}
read -r n_pass n_fail n_skip n_pkgfail <"$counts_file" || { n_pass=0 n_fail=0 n_skip=0 n_pkgfail=0; }
if ((status[2] != 0)); then
	echo "test.sh: the output filter failed; the raw events are in $TEST_JSON" >&2
fi
if ((test_rc == 0)); then
	done_step "go test" ok
else
	fail_step "go test"
fi

# --- fuzz smoke -------------------------------------------------------------
# Every fuzz target runs some executions beyond its seed corpus (which go test ran
# above), on a full run only; scripts/fuzz.sh runs them longer on demand. The budget is a
# count, not a duration: with a duration, Go 1.26's fuzz coordinator can fail a target
# with a bare "context deadline exceeded" at the deadline on a busy machine
# (go.dev/issue/75804, fixed in Go 1.27); a count has no deadline to race.
if ((!have_pkgs)) && [[ ${FUZZ:-1} != 0 ]]; then
	begin "fuzz (each target ${FUZZ_SMOKE_TIME:-500x})"
	if FUZZTIME=${FUZZ_SMOKE_TIME:-500x} "$ROOT/scripts/fuzz.sh"; then
		done_step fuzz ok
	else
		fail_step fuzz
	fi
fi

# --- summary ----------------------------------------------------------------
say "summary ($((SECONDS - total_start))s)"
for s in "${step_times[@]}"; do echo "  $s"; done
if [[ -s $counts_file.failures ]]; then
	echo "  failed tests:"
	sed 's/^/    /' "$counts_file.failures"
fi
rm -f "$counts_file.failures"
if ((test_rc != 0 && n_fail == 0)); then
	echo "  go test exited $test_rc with no failed test: a build failure, a failing TestMain or a bad argument (see above)"
fi
if ((n_pkgfail > 0)); then echo "  packages failed: $n_pkgfail"; fi
echo "  go test events: $TEST_JSON"
if ((${#failed_steps[@]})); then
	echo "test.sh: FAILED: ${failed_steps[*]}"
else
	echo "test.sh: OK"
fi
echo "tests: $n_pass passed, $n_fail failed, $n_skip skipped"
((${#failed_steps[@]} == 0))
