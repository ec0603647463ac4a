#!/bin/sh
# A PostgreSQL job queue on a fresh cluster in the current directory: a `jobs` table that
# 4 pgbench clients fill and drain for SECONDS (half the transactions enqueue 1-4 jobs of
# 256 bytes, half take up to 4 of the oldest with FOR UPDATE SKIP LOCKED and delete them),
# a VACUUM of the table every 3 s beside them, autovacuum on, then a CHECKPOINT and the
# server stopped. shared_buffers 64 MB, checkpoint_timeout 30 s, everything else default.
#
# usage: sh pg_queue.sh [SECONDS]
set -eu
SECONDS_RUN=${1:-30}
BIN=${PGBIN:-/usr/lib/postgresql/15/bin}
DATA=$PWD/pgdata
RUN="runuser -u postgres --"
chown postgres "$PWD"
chmod o+x "$(dirname "$PWD")"
$RUN "$BIN/initdb" -D "$DATA" -A trust -E UTF8 --no-locale >/dev/null
cat >>"$DATA/postgresql.conf" <<CONF
shared_buffers = 64MB
checkpoint_timeout = 30s
listen_addresses = ''
unix_socket_directories = '$PWD'
CONF
$RUN "$BIN/pg_ctl" -D "$DATA" -l "$PWD/server.log" -w start >/dev/null
trap '$RUN "$BIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null 2>&1 || true' EXIT
PSQL="$RUN $BIN/psql -h $PWD -q postgres"
$PSQL -c "CREATE TABLE jobs (id bigserial PRIMARY KEY, queued timestamptz DEFAULT now(), payload text)"
cat >"$PWD/enqueue.sql" <<'SQL'
\set n random(1, 4)
INSERT INTO jobs (payload) SELECT repeat(md5(random()::text), 8) FROM generate_series(1, :n);
SQL
cat >"$PWD/dequeue.sql" <<'SQL'
WITH taken AS (SELECT id FROM jobs ORDER BY id LIMIT 4 FOR UPDATE SKIP LOCKED)
DELETE FROM jobs USING taken WHERE jobs.id = taken.id;
SQL
chown postgres "$PWD/enqueue.sql" "$PWD/dequeue.sql"
(
    end=$(($(date +%s) + SECONDS_RUN))
    while [ "$(date +%s)" -lt "$end" ]; do
        sleep 3
        $PSQL -c "VACUUM jobs" || true
    done
) &
VACUUMS=$!
$RUN "$BIN/pgbench" -h "$PWD" -n -c 4 -j 2 -T "$SECONDS_RUN" \
    -f "$PWD/enqueue.sql@1" -f "$PWD/dequeue.sql@1" postgres
wait "$VACUUMS"
$PSQL -c CHECKPOINT
$RUN "$BIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null
trap - EXIT
