#!/usr/bin/env bash
# scripts/dev.sh: run the server locally for development.
#
#   scripts/dev.sh              go run ./cmd/server serve, with local defaults
#   scripts/dev.sh ARGS...      extra arguments go after `serve`
#
# It makes sure Postgres and Redis answer on 127.0.0.1 (scripts/services.sh), creates
# the database `slotrecovery` if it is missing, starts stripe-mock on 127.0.0.1:12111
# in the background if nothing answers there (it keeps running afterwards), and runs
# the server with DEV_MODE=1.
#
# Every variable below can be set beforehand to override its default. Twilio is left
# unconfigured on purpose: texts are logged instead of sent, and in DEV_MODE inbound
# texts are accepted without a signature, so replies can be simulated locally.
# SESSION_SECRET is left unset too: a random one is made at each start.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

# shellcheck source=scripts/services.sh
. "$ROOT/scripts/services.sh"

if ! command -v go >/dev/null 2>&1; then
	echo "dev.sh: go not found (expected /usr/local/go/bin/go)" >&2
	exit 1
fi

ensure_postgres
ensure_redis

# Create the default database only when the default URL is used: a DATABASE_URL set
# by hand points at a database someone else manages.
if [[ -z ${DATABASE_URL:-} ]]; then
	pg_admin="postgres://postgres@127.0.0.1:${PG_PORT:-5432}/postgres?sslmode=disable"
	exists=$(psql -w -X -Atq -d "$pg_admin" -c "select 1 from pg_database where datname = 'slotrecovery'" </dev/null)
	if [[ $exists != 1 ]]; then
		echo "dev.sh: creating database slotrecovery"
		psql -w -X -q -d "$pg_admin" -c 'create database slotrecovery' </dev/null
	fi
	export DATABASE_URL="postgres://postgres@127.0.0.1:${PG_PORT:-5432}/slotrecovery?sslmode=disable"
fi

# stripe-mock stands in for Stripe unless STRIPE_API_URL points somewhere else.
if [[ -z ${STRIPE_API_URL:-} ]]; then
	export STRIPE_MOCK_ADDR=${STRIPE_MOCK_ADDR:-127.0.0.1:12111}
	start_stripe_mock
	export STRIPE_API_URL="http://$STRIPE_MOCK_ADDR"
fi

export DEV_MODE=${DEV_MODE:-1}
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:${REDIS_PORT:-6379}/0}
export HTTP_ADDR=${HTTP_ADDR:-127.0.0.1:8080}
if [[ -z ${PUBLIC_URL:-} ]]; then
	host=${HTTP_ADDR%:*}
	[[ -n $host && $host != 0.0.0.0 ]] || host=127.0.0.1
	export PUBLIC_URL="http://$host:${HTTP_ADDR##*:}"
fi
export ADMIN_TOKEN=${ADMIN_TOKEN:-dev-admin-token-change-me}
export STRIPE_SECRET_KEY=${STRIPE_SECRET_KEY:-sk_test_123} # stripe-mock takes any sk_test_ key
export STRIPE_WEBHOOK_SECRET=${STRIPE_WEBHOOK_SECRET:-whsec_dev_secret}

twilio="not configured: texts are logged; inbound texts need no signature in DEV_MODE"
[[ -z ${TWILIO_ACCOUNT_SID:-} ]] || twilio="account $TWILIO_ACCOUNT_SID${TWILIO_API_URL:+ via $TWILIO_API_URL}"

cat <<EOF

  slot recovery, development server (DEV_MODE=$DEV_MODE)
    server        $PUBLIC_URL   (listening on $HTTP_ADDR)
    dashboard     $PUBLIC_URL/dashboard
    health        $PUBLIC_URL/healthz  $PUBLIC_URL/readyz  $PUBLIC_URL/metrics
    admin token   $ADMIN_TOKEN
                  curl -H 'Authorization: Bearer $ADMIN_TOKEN' -d '{...}' $PUBLIC_URL/api/shops
    Postgres      $DATABASE_URL
    Redis         $REDIS_URL
    Stripe API    $STRIPE_API_URL   (webhook secret $STRIPE_WEBHOOK_SECRET)
    Twilio        $twilio

EOF

exec go run ./cmd/server serve "$@"
