#!/usr/bin/env bash
# scripts/services.sh: make sure the local services that the tests and the dev
# server need are there and answering. Idempotent: when everything already runs it
# only checks (a few hundred milliseconds) and changes nothing.
#
# Run it:
#   scripts/services.sh                   Postgres, Redis and the stripe-mock binary
#   scripts/services.sh postgres          only Postgres (also: redis, stripe-mock)
#   scripts/services.sh stripe-mock-server  also start stripe-mock on 127.0.0.1:12111
#   scripts/services.sh chromium          install Debian's chromium (optional; never fails)
#   scripts/services.sh cc                install gcc and libc6-dev unless cgo already works
#   scripts/services.sh jq                install jq
#   scripts/services.sh pg-stat-statements  load pg_stat_statements (restarts Postgres once)
#   scripts/services.sh status            report, change nothing
#
# Or source it (`. scripts/services.sh`): that only defines the functions below
# (ensure_services, ensure_postgres, enable_pg_stat_statements, ensure_redis,
# ensure_stripe_mock_bin, start_stripe_mock, install_chromium, ensure_cc, ensure_jq,
# services_status) and runs
# nothing; each returns non-zero with a message on stderr when it cannot do its job.
#
# What it does when something is missing (as root, or through sudo). Every install is
# `apt-get install -y --no-install-recommends` (without it, postgresql brings exim4,
# cron and sysstat); apt's and dpkg's output goes to APT_LOG [artifacts/apt.log, or
# /tmp/slotrecovery-apt.log when that is not writable], one line a step to stderr:
#   Postgres  apt-get install postgresql; pg_createcluster if there is no cluster;
#             pg_ctlcluster --skip-systemctl-redirect VERSION CLUSTER start. If role
#             postgres cannot connect over 127.0.0.1 without a password, it puts
#             trust lines for 127.0.0.1/32 and ::1/128 at the top of that cluster's
#             pg_hba.conf and reloads.
#   Redis     apt-get install redis-server; redis-server --daemonize yes on loopback,
#             no persistence, maxmemory-policy noeviction.
#   stripe-mock  built from the pinned tools module into $(go env GOPATH)/bin.
#   cc        apt-get install gcc libc6-dev (cgo: go test -race and sqlc need it).
#   chromium, jq  apt-get install chromium / jq.
# It never flushes Redis, never drops a database and never stops a service (but
# pg-stat-statements, asked for, restarts Postgres once to load the module).
#
# Settings (environment; defaults in brackets):
#   PG_PORT [5432]  PG_CLUSTER [main, or whichever cluster has PG_PORT]  PG_VERSION [newest]
#   REDIS_PORT [6379]  REDIS_DIR [/var/lib/redis]  REDIS_LOGFILE [/var/log/redis/ci.log]
#   STRIPE_MOCK_ADDR [127.0.0.1:12111]  STRIPE_MOCK_HTTPS_ADDR [127.0.0.1:12112]
#   STRIPE_MOCK_BIN [looked up on PATH, /root/go/bin, $(go env GOPATH)/bin]
#   SERVICES_TIMEOUT [60] seconds to wait for a service to answer after starting it
#   PROGRESS_SECONDS [20] how often a long step (an install, a build) says it is still at it

_SVC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Go lives in /usr/local/go on these machines; a non-login shell may not have it.
if ! command -v go >/dev/null 2>&1 && [[ -x /usr/local/go/bin/go ]]; then
	export PATH="/usr/local/go/bin:$PATH"
fi

_svc_log() { printf 'services: %s\n' "$*" >&2; }
_svc_err() { printf 'services: ERROR: %s\n' "$*" >&2; }

_svc_timeout() { printf '%s' "${SERVICES_TIMEOUT:-60}"; }

# _svc_as_root CMD...: run CMD as root (directly, or through sudo).
_svc_as_root() {
	if [[ $(id -u) -eq 0 ]]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		if [[ -t 0 ]]; then sudo "$@"; else sudo -n "$@"; fi
	else
		_svc_err "need root (or sudo) to run: $*"
		return 1
	fi
}

_svc_can_be_root() { [[ $(id -u) -eq 0 ]] || command -v sudo >/dev/null 2>&1; }

# _svc_apt_log: where apt-get and dpkg write (the terminal gets one line a step).
_svc_apt_log() {
	local log=${APT_LOG:-$_SVC_ROOT/artifacts/apt.log}
	if ! mkdir -p "$(dirname "$log")" 2>/dev/null || ! touch "$log" 2>/dev/null; then
		log=${TMPDIR:-/tmp}/slotrecovery-apt.log
	fi
	printf '%s' "$log"
}

# _svc_apt_install PKG...: apt-get update (once per process tree), then install
# PKG... without recommended packages (plain `apt-get install postgresql` pulls exim4,
# cron and sysstat). The whole apt/dpkg output goes to $APT_LOG (default
# artifacts/apt.log); the terminal gets one line a step, and the log's tail on failure.
_svc_apt_install() {
	local log start rc
	if ! command -v apt-get >/dev/null 2>&1; then
		_svc_err "apt-get not found: install $* by hand"
		return 1
	fi
	log=$(_svc_apt_log)
	# An apt-get update of ours within the hour (an earlier script's) is recent enough.
	if [[ -z ${_SVC_APT_UPDATED:-} && -n $(find "$log.updated" -mmin -60 2>/dev/null) ]]; then
		export _SVC_APT_UPDATED=1
	fi
	if [[ -z ${_SVC_APT_UPDATED:-} ]]; then
		start=$SECONDS
		_svc_log "apt-get update (log $log)"
		printf '\n=== %s apt-get update\n' "$(date -u +%FT%TZ)" >>"$log"
		if ! _svc_as_root env DEBIAN_FRONTEND=noninteractive \
			timeout 600 apt-get -o DPkg::Lock::Timeout=300 update </dev/null >>"$log" 2>&1; then
			_svc_err "apt-get update failed; the end of $log:"
			tail -n 20 "$log" >&2
			return 1
		fi
		export _SVC_APT_UPDATED=1
		touch "$log.updated" 2>/dev/null || true
	fi
	start=$SECONDS
	printf '\n=== %s apt-get install --no-install-recommends %s\n' "$(date -u +%FT%TZ)" "$*" >>"$log"
	_svc_log "installing $* (apt-get; log $log)"
	heartbeat_start "services: installing $*" "apt's progress is in $log"
	if _svc_as_root env DEBIAN_FRONTEND=noninteractive \
		timeout 1200 apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends "$@" \
		</dev/null >>"$log" 2>&1; then
		rc=0
	else
		rc=$?
	fi
	heartbeat_stop
	if ((rc != 0)); then
		_svc_err "apt-get install $* failed (exit $rc); the end of $log:"
		tail -n 20 "$log" >&2
		return 1
	fi
	_svc_log "installed $* ($((SECONDS - start))s; log $log)"
}

# _svc_tcp_open PORT: something accepts TCP connections on 127.0.0.1:PORT.
_svc_tcp_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# ---------------------------------------------------------------------------
# Postgres

_svc_pg_url() { printf 'postgres://postgres@127.0.0.1:%s/postgres?sslmode=disable' "${PG_PORT:-5432}"; }

_svc_pg_ready() {
	if command -v pg_isready >/dev/null 2>&1; then
		pg_isready -q -h 127.0.0.1 -p "${PG_PORT:-5432}" -t 2 >/dev/null 2>&1
	else
		_svc_tcp_open "${PG_PORT:-5432}"
	fi
}

# _svc_pg_connect: role postgres connects over TCP without a password. On failure
# the reason is in _SVC_PG_ERROR.
_SVC_PG_ERROR=
_svc_pg_connect() {
	local out
	if out=$(PGCONNECT_TIMEOUT=5 PGPASSWORD='' psql -w -X -Atq -d "$(_svc_pg_url)" -c 'select 1' </dev/null 2>&1); then
		_SVC_PG_ERROR=
		return 0
	fi
	_SVC_PG_ERROR=$out
	return 1
}

# _svc_pg_find_cluster: sets _SVC_PG_VER and _SVC_PG_CLUSTER to the cluster that
# owns PG_PORT (or PG_VERSION/PG_CLUSTER, or the newest version's "main").
_svc_pg_find_cluster() {
	local port=${PG_PORT:-5432} line
	_SVC_PG_VER=''
	_SVC_PG_CLUSTER=''
	if command -v pg_lsclusters >/dev/null 2>&1; then
		line=$(pg_lsclusters -h 2>/dev/null | awk -v p="$port" \
			-v v="${PG_VERSION:-}" -v c="${PG_CLUSTER:-}" \
			'$3 == p && (v == "" || $1 == v) && (c == "" || $2 == c) { print $1, $2; exit }')
		if [[ -n $line ]]; then
			read -r _SVC_PG_VER _SVC_PG_CLUSTER <<<"$line"
			return 0
		fi
	fi
	_SVC_PG_CLUSTER=${PG_CLUSTER:-main}
	_SVC_PG_VER=${PG_VERSION:-}
	if [[ -z $_SVC_PG_VER ]]; then
		# shellcheck disable=SC2012 # version directory names: plain numbers
		_SVC_PG_VER=$(ls /usr/lib/postgresql 2>/dev/null | sort -V | tail -n 1)
	fi
	[[ -n $_SVC_PG_VER ]]
}

_svc_pg_installed() {
	command -v pg_ctlcluster >/dev/null 2>&1 && command -v pg_createcluster >/dev/null 2>&1 &&
		compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null
}

# _svc_pg_trust_loopback VER CLUSTER: let loopback TCP connections in without a
# password (first matching pg_hba line wins, so ours go on top), then reload.
_svc_pg_trust_loopback() {
	local ver=$1 cluster=$2 hba marker='# scripts/services.sh: password-less loopback'
	hba=/etc/postgresql/$ver/$cluster/pg_hba.conf
	if ! _svc_as_root test -f "$hba"; then
		_svc_err "cannot find $hba to allow password-less connections from 127.0.0.1"
		return 1
	fi
	if _svc_as_root grep -qF "$marker" "$hba"; then
		_svc_log "$hba already trusts loopback; reloading"
	else
		_svc_log "role postgres cannot connect over 127.0.0.1 without a password; adding trust for 127.0.0.1/32 and ::1/128 to the top of $hba"
		local tmp
		tmp=$(mktemp) || return 1
		{
			printf '%s (tests and local development; loopback only)\n' "$marker"
			printf 'host    all             all             127.0.0.1/32            trust\n'
			printf 'host    all             all             ::1/128                 trust\n'
			printf '\n'
			_svc_as_root cat "$hba"
		} >"$tmp" || { rm -f "$tmp"; return 1; }
		# Keep the file's owner and mode: overwrite its contents in place.
		# shellcheck disable=SC2016 # $1 and $2 are the inner shell's
		if ! _svc_as_root cp "$hba" "$hba.before-services-sh" ||
			! _svc_as_root sh -c 'cat "$1" > "$2"' sh "$tmp" "$hba"; then
			rm -f "$tmp"
			_svc_err "could not write $hba"
			return 1
		fi
		rm -f "$tmp"
	fi
	_svc_as_root pg_ctlcluster --skip-systemctl-redirect "$ver" "$cluster" reload >/dev/null 2>&1 || {
		_svc_err "pg_ctlcluster $ver $cluster reload failed"
		return 1
	}
}

ensure_postgres() {
	local port=${PG_PORT:-5432} deadline out
	# Fast path: up, and role postgres gets in over 127.0.0.1 without a password.
	if command -v psql >/dev/null 2>&1 && _svc_pg_ready && _svc_pg_connect; then
		return 0
	fi

	if ! _svc_pg_ready; then
		if ! _svc_pg_installed; then
			_svc_log "Postgres is not answering on 127.0.0.1:$port and is not installed"
			_svc_apt_install postgresql || return 1
		fi
		_svc_pg_find_cluster || { _svc_err "no PostgreSQL server version found in /usr/lib/postgresql"; return 1; }
		local ver=$_SVC_PG_VER cluster=$_SVC_PG_CLUSTER
		if [[ ! -d /etc/postgresql/$ver/$cluster ]]; then
			_svc_log "creating Postgres cluster $ver/$cluster on port $port"
			if ! out=$(_svc_as_root pg_createcluster --port "$port" "$ver" "$cluster" 2>&1); then
				_svc_err "pg_createcluster $ver $cluster failed: $out"
				return 1
			fi
		fi
		_svc_log "starting Postgres cluster $ver/$cluster"
		# Non-zero also when it already runs (then on another port; the wait says so).
		if ! out=$(_svc_as_root pg_ctlcluster --skip-systemctl-redirect "$ver" "$cluster" start 2>&1); then
			_svc_log "pg_ctlcluster start: $out"
		fi
		deadline=$((SECONDS + $(_svc_timeout)))
		until _svc_pg_ready; do
			if ((SECONDS >= deadline)); then
				_svc_err "Postgres did not answer on 127.0.0.1:$port within $(_svc_timeout)s"
				command -v pg_lsclusters >/dev/null 2>&1 && pg_lsclusters >&2
				_svc_err "log: /var/log/postgresql/postgresql-$ver-$cluster.log"
				return 1
			fi
			sleep 0.2
		done
		_svc_log "Postgres is up on 127.0.0.1:$port"
	fi

	if ! command -v psql >/dev/null 2>&1; then
		_svc_apt_install postgresql-client || return 1
	fi
	if _svc_pg_connect; then
		return 0
	fi
	_svc_log "connecting as postgres to 127.0.0.1:$port failed: ${_SVC_PG_ERROR//$'\n'/ }"
	_svc_pg_find_cluster || true
	if [[ ! -d /etc/postgresql/${_SVC_PG_VER}/${_SVC_PG_CLUSTER} ]]; then
		_svc_err "the Postgres on 127.0.0.1:$port is not a Debian cluster this script can configure; make role postgres able to connect without a password, or set TEST_DATABASE_URL"
		return 1
	fi
	_svc_pg_trust_loopback "$_SVC_PG_VER" "$_SVC_PG_CLUSTER" || return 1
	deadline=$((SECONDS + 10))
	until _svc_pg_connect; do
		if ((SECONDS >= deadline)); then
			_svc_err "role postgres still cannot connect to 127.0.0.1:$port: $_SVC_PG_ERROR"
			return 1
		fi
		sleep 0.2
	done
	_svc_log "role postgres connects to 127.0.0.1:$port without a password"
}

# enable_pg_stat_statements: load pg_stat_statements into the local Postgres (the load
# tool then prints the costliest statements per reply; docs/performance.md). The module
# loads only at start: when it is not loaded yet, this adds it to
# shared_preload_libraries (ALTER SYSTEM, keeping what is there) and RESTARTS the
# cluster, which drops every open connection: run it before tests or a server, not
# during. Loaded already: nothing changes.
enable_pg_stat_statements() {
	local port=${PG_PORT:-5432} libs deadline out
	ensure_postgres || return 1
	libs=$(psql -X -Atq "$(_svc_pg_url)" -c 'SHOW shared_preload_libraries' 2>&1) || {
		_svc_err "cannot read shared_preload_libraries: $libs"
		return 1
	}
	if [[ ,${libs// /}, == *,pg_stat_statements,* ]]; then
		_svc_log "pg_stat_statements is loaded already"
		return 0
	fi
	_svc_pg_find_cluster || { _svc_err "no Debian Postgres cluster on port $port to restart"; return 1; }
	libs=${libs:+$libs,}pg_stat_statements
	_svc_log "adding pg_stat_statements to shared_preload_libraries and restarting $_SVC_PG_VER/$_SVC_PG_CLUSTER (open connections drop)"
	if ! out=$(psql -X -q "$(_svc_pg_url)" -c "ALTER SYSTEM SET shared_preload_libraries = '$libs'" 2>&1); then
		_svc_err "ALTER SYSTEM failed: $out"
		return 1
	fi
	if ! out=$(_svc_as_root pg_ctlcluster --skip-systemctl-redirect "$_SVC_PG_VER" "$_SVC_PG_CLUSTER" restart 2>&1); then
		_svc_err "pg_ctlcluster restart failed: $out"
		return 1
	fi
	deadline=$((SECONDS + $(_svc_timeout)))
	until _svc_pg_ready && _svc_pg_connect; do
		if ((SECONDS >= deadline)); then
			_svc_err "Postgres did not come back on 127.0.0.1:$port within $(_svc_timeout)s"
			return 1
		fi
		sleep 0.2
	done
	_svc_log "pg_stat_statements loaded; a database gets it with CREATE EXTENSION pg_stat_statements (the load tool does)"
}

# ---------------------------------------------------------------------------
# Redis

_svc_redis_ping() {
	[[ $(timeout 5 redis-cli -h 127.0.0.1 -p "${REDIS_PORT:-6379}" ping 2>/dev/null) == PONG ]]
}

_svc_redis_check_policy() {
	local policy
	policy=$(timeout 5 redis-cli -h 127.0.0.1 -p "${REDIS_PORT:-6379}" config get maxmemory-policy 2>/dev/null | sed -n 2p)
	if [[ -n $policy && $policy != noeviction ]]; then
		_svc_log "warning: Redis on 127.0.0.1:${REDIS_PORT:-6379} has maxmemory-policy $policy; this project needs noeviction (an evicted lock is a bug)"
	fi
	return 0
}

ensure_redis() {
	local port=${REDIS_PORT:-6379} dir logfile deadline
	# The tests run their own redis-server processes too (a local cluster), so the
	# binaries must be here even when a Redis already answers.
	if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
		_svc_log "redis-server/redis-cli not found"
		_svc_apt_install redis-server || return 1
	fi
	if _svc_redis_ping; then
		_svc_redis_check_policy
		return 0
	fi
	if _svc_tcp_open "$port"; then
		# Something listens: maybe a Redis still loading, maybe something else.
		deadline=$((SECONDS + $(_svc_timeout)))
		until _svc_redis_ping; do
			if ((SECONDS >= deadline)); then
				_svc_err "127.0.0.1:$port accepts connections but does not answer PING (not Redis, or it wants a password)"
				return 1
			fi
			sleep 0.2
		done
		_svc_redis_check_policy
		return 0
	fi

	dir=${REDIS_DIR:-/var/lib/redis}
	logfile=${REDIS_LOGFILE:-/var/log/redis/ci.log}
	local -a run=(_svc_as_root)
	if ! _svc_can_be_root; then
		# No way to root: run it as this user, with files this user can write.
		run=()
		dir=${REDIS_DIR:-${TMPDIR:-/tmp}/slotrecovery-redis}
		logfile=${REDIS_LOGFILE:-$dir/redis.log}
	fi
	"${run[@]}" mkdir -p "$dir" "$(dirname "$logfile")" || return 1
	_svc_log "starting redis-server on 127.0.0.1:$port (no persistence, noeviction; log $logfile)"
	if ! "${run[@]}" redis-server --daemonize yes --bind 127.0.0.1 -::1 --port "$port" \
		--save "" --appendonly no --maxmemory-policy noeviction \
		--dir "$dir" --logfile "$logfile"; then
		_svc_err "redis-server did not start; see $logfile"
		return 1
	fi
	deadline=$((SECONDS + $(_svc_timeout)))
	until _svc_redis_ping; do
		if ((SECONDS >= deadline)); then
			_svc_err "Redis did not answer on 127.0.0.1:$port within $(_svc_timeout)s; see $logfile"
			"${run[@]}" tail -n 20 "$logfile" >&2 2>/dev/null
			return 1
		fi
		sleep 0.1
	done
	_svc_log "Redis is up on 127.0.0.1:$port"
}

# ---------------------------------------------------------------------------
# stripe-mock

# The version tools/go.mod pins.
_svc_stripe_mock_pin() {
	awk '$1 == "github.com/stripe/stripe-mock" && $2 ~ /^v/ { print $2; exit }' "$_SVC_ROOT/tools/go.mod" 2>/dev/null
}

_svc_gopath_bins() {
	local gopath dir
	gopath=$(go env GOPATH 2>/dev/null) || return 0
	local IFS=:
	for dir in $gopath; do printf '%s\n' "$dir/bin"; done
}

# stripe_mock_bin: print the path of the stripe-mock binary the tests will use
# (same order as internal/testkit/stripetest), or fail.
stripe_mock_bin() {
	local p
	if [[ -n ${STRIPE_MOCK_BIN:-} ]]; then
		[[ -x $STRIPE_MOCK_BIN ]] && { printf '%s\n' "$STRIPE_MOCK_BIN"; return 0; }
		return 1
	fi
	if p=$(command -v stripe-mock 2>/dev/null); then
		printf '%s\n' "$p"
		return 0
	fi
	for p in /root/go/bin $(_svc_gopath_bins); do
		if [[ -f $p/stripe-mock && -x $p/stripe-mock ]]; then
			printf '%s\n' "$p/stripe-mock"
			return 0
		fi
	done
	return 1
}

ensure_stripe_mock_bin() {
	local bin pin have gobin
	pin=$(_svc_stripe_mock_pin)
	if bin=$(stripe_mock_bin); then
		if [[ -n $pin ]] && command -v go >/dev/null 2>&1; then
			have=$(go version -m "$bin" 2>/dev/null | awk '$1 == "mod" && $2 == "github.com/stripe/stripe-mock" { print $3; exit }')
			if [[ -n $have && $have != "$pin" ]]; then
				_svc_log "warning: $bin is stripe-mock $have; tools/go.mod pins $pin (remove it to rebuild)"
			fi
		fi
		return 0
	fi
	if [[ -n ${STRIPE_MOCK_BIN:-} ]]; then
		_svc_err "STRIPE_MOCK_BIN=$STRIPE_MOCK_BIN is not an executable file"
		return 1
	fi
	if ! command -v go >/dev/null 2>&1; then
		_svc_err "stripe-mock is missing and go is not on PATH to build it"
		return 1
	fi
	gobin=$(go env GOBIN)
	[[ -n $gobin ]] || gobin=$(_svc_gopath_bins | head -n 1)
	mkdir -p "$gobin" || return 1
	_svc_log "building stripe-mock ${pin:-} from tools/go.mod into $gobin"
	# Build beside the target, then rename: a parallel run never sees half a file.
	if ! (cd "$_SVC_ROOT/tools" && GOFLAGS=-mod=mod go_progress "services: building stripe-mock" "about a minute on 2 cores" \
		go build -v -o "$gobin/.stripe-mock.$$" github.com/stripe/stripe-mock); then
		rm -f "$gobin/.stripe-mock.$$"
		_svc_err "building stripe-mock failed"
		return 1
	fi
	mv -f "$gobin/.stripe-mock.$$" "$gobin/stripe-mock" || return 1
	_svc_log "stripe-mock installed at $gobin/stripe-mock"
}

_svc_stripe_mock_answers() {
	local addr=$1 code
	if command -v curl >/dev/null 2>&1; then
		# Any sk_test_ key will do; stripe-mock answers 200 with a fixture.
		code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 -u sk_test_123: "http://$addr/v1/customers" 2>/dev/null)
		[[ $code == 200 ]]
	else
		_svc_tcp_open "${addr##*:}"
	fi
}

# start_stripe_mock: run stripe-mock in the background on STRIPE_MOCK_ADDR (HTTP
# only to the outside world: its HTTPS listener stays on loopback too), unless one
# answers there already. It keeps running after this script ends; when this call
# started it, STRIPE_MOCK_STARTED_PID holds its pid (else it is empty), so that a
# caller can stop what it started (scripts/dev.sh does).
STRIPE_MOCK_STARTED_PID=
start_stripe_mock() {
	local addr=${STRIPE_MOCK_ADDR:-127.0.0.1:12111} https=${STRIPE_MOCK_HTTPS_ADDR:-127.0.0.1:12112}
	local bin log pid deadline
	STRIPE_MOCK_STARTED_PID=
	if _svc_stripe_mock_answers "$addr"; then
		return 0
	fi
	if _svc_tcp_open "${addr##*:}"; then
		_svc_err "something that is not stripe-mock listens on $addr"
		return 1
	fi
	ensure_stripe_mock_bin || return 1
	bin=$(stripe_mock_bin) || return 1
	if _svc_tcp_open "${https##*:}"; then
		https="${https%:*}:" # taken: let the kernel pick a free port
	fi
	log=${STRIPE_MOCK_LOG:-${TMPDIR:-/tmp}/stripe-mock-${addr##*:}.log}
	_svc_log "starting stripe-mock on http://$addr (log $log)"
	if command -v setsid >/dev/null 2>&1; then
		setsid "$bin" -http-addr "$addr" -https-addr "$https" </dev/null >"$log" 2>&1 &
	else
		nohup "$bin" -http-addr "$addr" -https-addr "$https" </dev/null >"$log" 2>&1 &
	fi
	pid=$!
	disown "$pid" 2>/dev/null || true
	STRIPE_MOCK_STARTED_PID=$pid
	deadline=$((SECONDS + $(_svc_timeout)))
	until _svc_stripe_mock_answers "$addr"; do
		if ! kill -0 "$pid" 2>/dev/null; then
			_svc_err "stripe-mock exited; its log:"
			tail -n 20 "$log" >&2
			return 1
		fi
		if ((SECONDS >= deadline)); then
			_svc_err "stripe-mock (pid $pid) did not answer on $addr within $(_svc_timeout)s; see $log"
			return 1
		fi
		sleep 0.2
	done
	_svc_log "stripe-mock is up on http://$addr (pid $pid)"
}

# ---------------------------------------------------------------------------
# Chromium (the browser test skips with a message without it), a C compiler, jq

install_chromium() {
	local b
	for b in chromium chromium-browser google-chrome; do
		command -v "$b" >/dev/null 2>&1 && return 0
	done
	if ! _svc_can_be_root; then
		_svc_log "chromium is not installed and this user cannot install it; the browser test will skip"
		return 0
	fi
	_svc_log "chromium not found: installing it for the browser test"
	if ! _svc_apt_install chromium; then
		_svc_log "chromium could not be installed; the browser test will skip"
	fi
	return 0
}

# _svc_cc_works: the C compiler cgo uses builds a program (gcc alone, without
# libc6-dev's headers, does not).
_svc_cc_works() {
	local cc
	cc=$(go env CC 2>/dev/null)
	cc=${cc%% *}
	command -v "${cc:-gcc}" >/dev/null 2>&1 || return 1
	printf '#include <stdlib.h>\nint main(void) { return 0; }\n' |
		"${cc:-gcc}" -x c -o /dev/null - >/dev/null 2>&1
}

# ensure_cc: a C compiler for cgo (go test -race, sqlc): gcc and libc6-dev.
ensure_cc() {
	_svc_cc_works && return 0
	_svc_log "no working C compiler (go test -race and sqlc need cgo): installing gcc"
	_svc_apt_install gcc libc6-dev || return 1
	if ! _svc_cc_works; then
		_svc_err "gcc was installed but still cannot build a C program; see $(_svc_apt_log)"
		return 1
	fi
}

# ensure_jq: jq, which the walkthrough (docs/walkthrough.md) uses to pick ids out of answers.
ensure_jq() {
	command -v jq >/dev/null 2>&1 && return 0
	_svc_apt_install jq
}

# ---------------------------------------------------------------------------
# Progress: a first, cold run builds for minutes (the server, vet, sqlc, the tests);
# these keep the terminal from going silent without hiding anything go prints.

# heartbeat_start LABEL HINT [STATUS]: every PROGRESS_SECONDS [20] seconds, until
# heartbeat_stop, print "LABEL: Ns so far" to stderr, then STATUS's output (a shell
# snippet, evaluated each time) and, the first time only, HINT (what to expect).
_SVC_HB_PID=
heartbeat_start() {
	local label=$1 hint=$2 status=${3:-} every=${PROGRESS_SECONDS:-20} t0
	t0=$(date +%s)
	heartbeat_stop
	(
		# A TERM during the sleep ends the sleep too: nothing is left behind.
		sl=
		trap '[[ -z $sl ]] || kill "$sl" 2>/dev/null; exit 0' TERM
		first=1
		while :; do
			sleep "$every" &
			sl=$!
			wait "$sl"
			# The script that started it is gone (killed, Ctrl-C): so is the heartbeat.
			kill -0 "$$" 2>/dev/null || exit 0
			extra=
			[[ -z $status ]] || extra=$(eval "$status" 2>/dev/null)
			line="$label: $(($(date +%s) - t0))s so far${extra:+; $extra}"
			((first)) && [[ -n $hint ]] && line="$line ($hint)"
			first=0
			printf '%s\n' "$line" >&2
		done
	) &
	_SVC_HB_PID=$!
}

heartbeat_stop() {
	[[ -n $_SVC_HB_PID ]] || return 0
	kill -TERM "$_SVC_HB_PID" 2>/dev/null || true
	wait "$_SVC_HB_PID" 2>/dev/null || true
	_SVC_HB_PID=
}

# go_progress LABEL HINT GO-COMMAND...: run a go command given -v (build, vet) with a
# heartbeat that counts the packages it has built. go -v prints each package's path on
# stderr: those lines are counted instead of printed; every other line (go: downloading,
# compile errors, vet's findings) passes through as it comes. Returns the command's
# status.
go_progress() {
	local label=$1 hint=$2 count rc=0
	shift 2
	count=$(mktemp) || return 1
	heartbeat_start "$label" "$hint" "printf '%s packages done' \"\$(wc -l <'$count')\""
	# stdout goes on as it is; stderr through the filter (back to stderr).
	{
		"$@" 2>&1 1>&3 3>&- | awk -v f="$count" '/^[[:alnum:]._~\/+-]+$/ { print >>f; fflush(f); next } { print; fflush() }' >&2
		rc=${PIPESTATUS[0]}
	} 3>&1 || true
	heartbeat_stop
	rm -f "$count"
	return "$rc"
}

# ---------------------------------------------------------------------------

ensure_services() {
	ensure_postgres && ensure_redis && ensure_stripe_mock_bin
}

services_status() {
	local rc=0 bin
	if command -v psql >/dev/null 2>&1 && _svc_pg_ready && _svc_pg_connect; then
		echo "postgres     ok    $(_svc_pg_url)"
	else
		echo "postgres     DOWN  127.0.0.1:${PG_PORT:-5432} ${_SVC_PG_ERROR//$'\n'/ }"
		rc=1
	fi
	if command -v redis-cli >/dev/null 2>&1 && _svc_redis_ping; then
		echo "redis        ok    redis://127.0.0.1:${REDIS_PORT:-6379}"
	else
		echo "redis        DOWN  127.0.0.1:${REDIS_PORT:-6379}"
		rc=1
	fi
	if bin=$(stripe_mock_bin); then
		echo "stripe-mock  ok    $bin"
	else
		echo "stripe-mock  MISSING (scripts/services.sh stripe-mock builds it)"
		rc=1
	fi
	if _svc_stripe_mock_answers "${STRIPE_MOCK_ADDR:-127.0.0.1:12111}"; then
		echo "stripe-mock  serving http://${STRIPE_MOCK_ADDR:-127.0.0.1:12111}"
	else
		echo "stripe-mock  not serving on ${STRIPE_MOCK_ADDR:-127.0.0.1:12111} (only scripts/dev.sh needs that)"
	fi
	if command -v chromium >/dev/null 2>&1; then
		echo "chromium     ok    $(command -v chromium)"
	else
		echo "chromium     not installed (optional)"
	fi
	return "$rc"
}

_svc_main() {
	local arg
	[[ $# -gt 0 ]] || set -- all
	for arg in "$@"; do
		case $arg in
		all) ensure_services ;;
		postgres) ensure_postgres ;;
		redis) ensure_redis ;;
		stripe-mock) ensure_stripe_mock_bin ;;
		stripe-mock-server) ensure_services && start_stripe_mock ;;
		chromium) install_chromium ;;
		cc | gcc) ensure_cc ;;
		jq) ensure_jq ;;
		pg-stat-statements) enable_pg_stat_statements ;;
		status) services_status ;;
		-h | --help | help)
			sed -n '2,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
			;;
		*)
			_svc_err "unknown argument: $arg (try --help)"
			return 2
			;;
		esac || return 1
	done
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	set -euo pipefail
	_svc_main "$@"
fi
