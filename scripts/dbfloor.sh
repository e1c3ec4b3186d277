#!/usr/bin/env bash
# scripts/dbfloor.sh: the durable floor of a YES on this machine (docs/performance.md).
#
#   scripts/dbfloor.sh              two cases of FLOOR_T [15] seconds each
#
# pgbench with 64 clients in flight (as the load tool's throughput scenario) on the local
# Postgres (127.0.0.1:5432, role postgres, trust auth), synchronous commits. One
# transaction a YES, the least durable work a YES must do: store the text by its id,
# claim the slot with a guarded update and a booking under a unique index, and record the
# outcome. Prints, as "FIGURE name value" lines, replies/s, p50 and p99 for 200 openings
# (soon all decided: most YES lose, as in throughput and flash) and for 400,000 (every
# YES wins). It makes and drops its own database. Needs pgbench (Debian's
# postgresql-client). Run it in the same sitting as the load tool: the ratio of the two
# holds on a noisy machine, the absolute figures do not.
set -euo pipefail

db=floor_$$
work=$(mktemp -d)
psql=(psql -X -q -h 127.0.0.1 -U postgres)
command -v pgbench >/dev/null || { echo "dbfloor.sh: pgbench not found (apt-get install postgresql-client)" >&2; exit 1; }
"${psql[@]}" -c "CREATE DATABASE $db" >/dev/null
trap '"${psql[@]}" -c "DROP DATABASE IF EXISTS $db" >/dev/null; rm -rf "$work"' EXIT

"${psql[@]}" -d "$db" >/dev/null <<'SQL'
CREATE TABLE floor_openings (id bigint PRIMARY KEY, status text NOT NULL DEFAULT 'open', filled_by bigint);
CREATE TABLE floor_inbound (sid text PRIMARY KEY, from_phone text NOT NULL, body text NOT NULL,
  outcome text, received_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE floor_bookings (id bigserial PRIMARY KEY, opening_id bigint NOT NULL, customer bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now());
CREATE UNIQUE INDEX ON floor_bookings (opening_id);
INSERT INTO floor_openings (id) SELECT g FROM generate_series(1, 400000) g;
VACUUM ANALYZE;
SQL

cat >"$work/yes.sql" <<'SQL'
\set op random(1, :nopen)
\set cust random(1, 2000000000)
\set nonce random(1, 2000000000)
BEGIN;
INSERT INTO floor_inbound (sid, from_phone, body) VALUES ('SM' || :client_id || '_' || :nonce || '_' || :cust, '+1555' || :cust, 'YES');
WITH won AS (UPDATE floor_openings SET status = 'filled', filled_by = :cust WHERE id = :op AND status = 'open' RETURNING id)
INSERT INTO floor_bookings (opening_id, customer) SELECT id, :cust FROM won;
UPDATE floor_inbound SET outcome = 'done' WHERE sid = 'SM' || :client_id || '_' || :nonce || '_' || :cust;
COMMIT;
SQL

cd "$work"
# pct P: the P-th percentile, in ms, of the latencies (µs, third column) in pgbench's logs.
pct() { cat pgbench_log.* | awk '{print $3}' | sort -n | awk -v p="$1" '{a[NR]=$1} END{i=int(NR*p); if(i<1)i=1; printf "%.1f", a[i]/1000}'; }
# ticks: the machine's busy and total CPU ticks so far (/proc/stat: idle and iowait are
# not busy; guest time is counted in user already).
ticks() { awk '/^cpu /{b=$2+$3+$4+$7+$8+$9; print b, b+$5+$6; exit}' /proc/stat; }
for n in 200 400000; do
	rm -f pgbench_log.*
	read -r busy0 all0 < <(ticks)
	out=$(pgbench -h 127.0.0.1 -U postgres -n -M prepared -c 64 -j 2 -T "${FLOOR_T:-15}" -l -D nopen=$n -f yes.sql "$db" 2>&1)
	read -r busy1 all1 < <(ticks)
	tps=$(echo "$out" | awk -F'= ' '/^tps/{print $2}' | awk '{print $1}' | head -1)
	txs=$(echo "$out" | awk '/number of transactions actually processed/{split($NF,a,"/"); print a[1]}')
	echo "FIGURE floor_nopen${n}_per_s ${tps%.*}"
	echo "FIGURE floor_nopen${n}_p50_ms $(pct 0.5)"
	echo "FIGURE floor_nopen${n}_p99_ms $(pct 0.99)"
	# The machine's CPU per transaction (every process: pgbench, Postgres, anything else
	# running) and how busy the cores were: near 100 %, the floor is the cores' bound;
	# well under it, the disk's (the WAL's flushes).
	awk -v b=$((busy1 - busy0)) -v a=$((all1 - all0)) -v t="${txs:-0}" -v n="$n" 'BEGIN {
		if (t > 0) printf "FIGURE floor_nopen%s_machine_cpu_ms %.3f\n", n, b * 10 / t
		if (a > 0) printf "FIGURE floor_nopen%s_cores_busy_pct %.0f\n", n, 100 * b / a }'
done
