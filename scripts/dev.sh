#!/usr/bin/env bash
# scripts/dev.sh: run the server locally for development.
#
#   scripts/dev.sh              build bin/server, run `bin/server serve` with local defaults
#   scripts/dev.sh ARGS...      extra arguments go after `serve`
#
# It makes sure Postgres and Redis answer on 127.0.0.1 (scripts/services.sh: it installs
# them with apt-get when missing, as root or through sudo, and jq for the README's
# walkthrough), creates the database `slotrecovery` if it is missing, starts stripe-mock
# on 127.0.0.1:12111 if nothing answers there, builds the server into bin/server and
# runs it as its child with DEV_MODE=1. Once /readyz answers it prints a banner (address,
# admin token, how to stop) and writes tmp/dev.env, which the walkthrough sources:
#
#   . tmp/dev.env    # BASE, SERVER, DEV_PID, and the server's settings (DATABASE_URL,
#                    # REDIS_URL, ADMIN_TOKEN, STRIPE_*, ...): `go run ./cmd/server
#                    # migrate|simulate` then work in that shell as they do for dev.sh
#
# From its start until it stops, tmp/dev.pid holds its pid: the walkthrough waits for
# tmp/dev.env only while that process lives. A first run is slow (package installs, a
# cold build of the server): it says what it is doing at least every 20 seconds.
#
# Stop it with Ctrl-C, or `kill <pid of dev.sh>` (SIGTERM or SIGINT): the signal goes on
# to the server, which shuts down gracefully; then the stripe-mock this script started,
# if it did, is stopped too (one that already ran is left alone), and tmp/dev.env and
# tmp/dev.pid are removed. dev.sh exits with the server's status.
#
# Every variable below can be set beforehand to override its default. Twilio is left
# unconfigured on purpose: texts are logged instead of sent, and in DEV_MODE inbound
# texts are accepted without a signature, so replies can be simulated locally.
# SESSION_SECRET is left unset too: a random one is made at each start. ERASURE_KEY and
# SECRETS_KEY, unset, are DEV_MODE's fixed sandbox keys (a server outside DEV_MODE
# requires its own: docs/configuration.md).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

# shellcheck source=scripts/services.sh
. "$ROOT/scripts/services.sh"

say() { printf 'dev.sh: %s\n' "$*" >&2; }

if ! command -v go >/dev/null 2>&1; then
	say "go not found (expected /usr/local/go/bin/go)"
	exit 1
fi

# tmp/ first: the walkthrough looks here for this script's pid and, once ready, its
# settings. (Its log can only go to tmp/ once tmp/ exists: `mkdir -p tmp` first.)
mkdir -p "$ROOT/bin" "$ROOT/tmp"
ENV_FILE=$ROOT/tmp/dev.env
PID_FILE=$ROOT/tmp/dev.pid
# A dev.sh killed with SIGKILL leaves its files behind: drop them when its pid is gone.
for f in "$ENV_FILE" "$PID_FILE"; do
	[[ -f $f ]] || continue
	old_pid=$(sed -n 's/^# pid \([0-9]*\)$/\1/p; s/^\([0-9][0-9]*\)$/\1/p' "$f" | head -n 1)
	if [[ -z $old_pid ]] || ! kill -0 "$old_pid" 2>/dev/null; then
		rm -f "$f"
	elif [[ $f == "$PID_FILE" ]]; then
		say "warning: another scripts/dev.sh (pid $old_pid) runs from this folder; tmp/dev.env will describe this one"
	fi
done
echo "$$" >"$PID_FILE"

ensure_postgres
ensure_redis
ensure_jq || say "warning: jq is missing; the walkthrough (docs/walkthrough.md) uses it"

# Create the default database only when the default URL is used: a DATABASE_URL set
# by hand points at a database someone else manages.
if [[ -z ${DATABASE_URL:-} ]]; then
	pg_admin="postgres://postgres@127.0.0.1:${PG_PORT:-5432}/postgres?sslmode=disable"
	exists=$(psql -w -X -Atq -d "$pg_admin" -c "select 1 from pg_database where datname = 'slotrecovery'" </dev/null)
	if [[ $exists != 1 ]]; then
		say "creating database slotrecovery"
		psql -w -X -q -d "$pg_admin" -c 'create database slotrecovery' </dev/null
	fi
	export DATABASE_URL="postgres://postgres@127.0.0.1:${PG_PORT:-5432}/slotrecovery?sslmode=disable"
fi

server_pid=
stripe_mock_pid=
cleanup() {
	if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then
		kill -TERM "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	if [[ -n $stripe_mock_pid ]] && kill -0 "$stripe_mock_pid" 2>/dev/null; then
		say "stopping the stripe-mock it started (pid $stripe_mock_pid)"
		kill -TERM "$stripe_mock_pid" 2>/dev/null || true
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			kill -0 "$stripe_mock_pid" 2>/dev/null || break
			sleep 0.2
		done
	fi
	# Only our own files: another dev.sh may have written them since.
	if [[ -f $ENV_FILE ]] && grep -q "^# pid $$\$" "$ENV_FILE" 2>/dev/null; then
		rm -f "$ENV_FILE"
	fi
	if [[ $(cat "$PID_FILE" 2>/dev/null) == "$$" ]]; then
		rm -f "$PID_FILE"
	fi
}
trap cleanup EXIT

# stripe-mock stands in for Stripe unless STRIPE_API_URL points somewhere else (a shell
# that sourced tmp/dev.env has it set to the stripe-mock's own address: start it then too).
export STRIPE_MOCK_ADDR=${STRIPE_MOCK_ADDR:-127.0.0.1:12111}
if [[ -z ${STRIPE_API_URL:-} || $STRIPE_API_URL == "http://$STRIPE_MOCK_ADDR" ]]; then
	start_stripe_mock
	stripe_mock_pid=$STRIPE_MOCK_STARTED_PID
	export STRIPE_API_URL="http://$STRIPE_MOCK_ADDR"
fi

export DEV_MODE=${DEV_MODE:-1}
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:${REDIS_PORT:-6379}/0}
export HTTP_ADDR=${HTTP_ADDR:-127.0.0.1:8080}
# Where this script reaches the server (PUBLIC_URL may be a tunnel's address).
host=${HTTP_ADDR%:*}
[[ -n $host && $host != 0.0.0.0 && $host != '[::]' ]] || host=127.0.0.1
LOCAL_URL="http://$host:${HTTP_ADDR##*:}"
export PUBLIC_URL=${PUBLIC_URL:-$LOCAL_URL}
export ADMIN_TOKEN=${ADMIN_TOKEN:-dev-admin-token-change-me}
export STRIPE_SECRET_KEY=${STRIPE_SECRET_KEY:-sk_test_123} # stripe-mock takes any sk_test_ key
export STRIPE_WEBHOOK_SECRET=${STRIPE_WEBHOOK_SECRET:-whsec_dev_secret}

# Build first, then run the binary as this script's child: `go run` would leave the
# server running when its parent is killed, and `exec` would lose the clean-up above.
BIN=$ROOT/bin/server
if [[ -x $BIN ]]; then
	say "building bin/server (go build ./cmd/server)"
else
	say "building bin/server (go build ./cmd/server): a first build compiles every dependency, 1-3 min on 2 cores"
fi
build_start=$SECONDS
if ! go_progress "dev.sh: building bin/server" "" go build -v -o "$BIN.tmp.$$" ./cmd/server; then
	rm -f "$BIN.tmp.$$"
	say "the build failed (see above)"
	exit 1
fi
mv -f "$BIN.tmp.$$" "$BIN"
say "built in $((SECONDS - build_start))s; starting the server on $HTTP_ADDR"

# A background job of a script ignores SIGINT, so both signals go on as SIGTERM: the
# server shuts down gracefully on either.
stop_server() {
	say "stopping the server (pid $server_pid)"
	kill -TERM "$server_pid" 2>/dev/null || true
}
trap stop_server TERM INT

"$BIN" serve "$@" &
server_pid=$!

until curl -fsS -o /dev/null --max-time 2 "$LOCAL_URL/readyz" 2>/dev/null; do
	if ! kill -0 "$server_pid" 2>/dev/null; then
		break
	fi
	sleep 0.2
done

if kill -0 "$server_pid" 2>/dev/null; then
	twilio="not configured: texts are logged; inbound texts need no signature in DEV_MODE"
	[[ -z ${TWILIO_ACCOUNT_SID:-} ]] || twilio="account $TWILIO_ACCOUNT_SID${TWILIO_API_URL:+ via $TWILIO_API_URL}"
	stripe_note="(webhook secret $STRIPE_WEBHOOK_SECRET)"
	[[ -z $stripe_mock_pid ]] || stripe_note="$stripe_note; stripe-mock pid $stripe_mock_pid, stopped with the server"

	umask 077
	{
		printf '# written by scripts/dev.sh for the server it runs; removed when it stops\n'
		printf '# pid %s\n' "$$"
		printf '# where the walkthrough reaches the server, the binary, and who to stop\n'
		printf 'export BASE=%q\n' "$LOCAL_URL"
		printf 'export SERVER=%q\n' "$BIN"
		printf 'export DEV_PID=%q\n' "$$"
		printf '# the server'"'"'s settings, for go run ./cmd/server migrate|simulate|serve in this shell\n'
		for v in DATABASE_URL REDIS_URL HTTP_ADDR PUBLIC_URL DEV_MODE ADMIN_TOKEN ERASURE_KEY SECRETS_KEY \
			STRIPE_SECRET_KEY STRIPE_WEBHOOK_SECRET STRIPE_API_URL \
			TWILIO_ACCOUNT_SID TWILIO_AUTH_TOKEN TWILIO_API_URL SESSION_SECRET REDIS_KEY_PREFIX; do
			[[ -z ${!v:-} ]] || printf 'export %s=%q\n' "$v" "${!v}"
		done
	} >"$ENV_FILE.$$"
	mv -f "$ENV_FILE.$$" "$ENV_FILE" # whole or not at all: the walkthrough sources it once it exists

	cat >&2 <<EOF

  slot recovery, development server (DEV_MODE=$DEV_MODE) is ready
    server        $PUBLIC_URL   (listening on $HTTP_ADDR)
    dashboard     $PUBLIC_URL/dashboard
    health        $PUBLIC_URL/healthz  $PUBLIC_URL/readyz  $PUBLIC_URL/metrics
    admin token   $ADMIN_TOKEN
                  curl -H 'Authorization: Bearer $ADMIN_TOKEN' -d '{...}' $LOCAL_URL/api/shops
    Postgres      $DATABASE_URL
    Redis         $REDIS_URL
    Stripe API    $STRIPE_API_URL   $stripe_note
    Twilio        $twilio
    walkthrough   scripts/walkthrough.sh, or docs/walkthrough.md's block (in another shell, from $ROOT)
    settings      . tmp/dev.env   (then go run ./cmd/server migrate|simulate ... work there too)
    stop          Ctrl-C here, or: kill $$

EOF
fi

# wait returns early when a trapped signal arrives: wait again until the server is gone.
status=0
while :; do
	if wait "$server_pid" 2>/dev/null; then status=0; else status=$?; fi
	((status == 127)) && break # already reaped: status is the one before
	kill -0 "$server_pid" 2>/dev/null || break
done
# A signal may have cut the last wait short as the server exited: ask once more.
if ((status > 128)); then
	if wait "$server_pid" 2>/dev/null; then status=0; else
		s=$?
		((s == 127)) || status=$s
	fi
fi
server_pid=
say "server exited (status $status)"
exit "$status"
