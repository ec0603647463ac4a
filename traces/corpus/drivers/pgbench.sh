#!/bin/sh
# PostgreSQL pgbench (TPC-B-like) on a fresh cluster in the current directory:
# initdb, start (shared_buffers 128 MB, checkpoint_timeout 30 s, everything else default),
# wal_keep_size 4 GB (so that the run's WAL is still there to dump),
# pgbench -i -s SCALE, then SECONDS of pgbench with 4 clients, a CHECKPOINT, and the
# server stopped. The WAL of the run is dumped with pg_waldump to $WALDUMP (outside the
# traced file system) for `zombiesim trace import-wal`.
#
# usage: WALDUMP=/tmp/waldump.txt sh pgbench.sh [SECONDS] [SCALE]
set -eu
SECONDS_RUN=${1:-60}
SCALE=${2:-10}
BIN=${PGBIN:-/usr/lib/postgresql/15/bin}
DATA=$PWD/pgdata
RUN="runuser -u postgres --"
chown postgres "$PWD"
# The server runs as postgres: it must reach this directory (a capture mounts the file
# system under a private temporary directory).
chmod o+x "$(dirname "$PWD")"
$RUN "$BIN/initdb" -D "$DATA" -A trust -E UTF8 --no-locale >/dev/null
cat >>"$DATA/postgresql.conf" <<CONF
shared_buffers = 128MB
checkpoint_timeout = 30s
wal_keep_size = 4GB
listen_addresses = ''
unix_socket_directories = '$PWD'
CONF
$RUN "$BIN/pg_ctl" -D "$DATA" -l "$PWD/server.log" -w start >/dev/null
trap '$RUN "$BIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null 2>&1 || true' EXIT
$RUN "$BIN/pgbench" -h "$PWD" -i -s "$SCALE" postgres >/dev/null 2>&1
START=$($RUN "$BIN/psql" -h "$PWD" -Atc "SELECT pg_walfile_name(pg_current_wal_lsn())" postgres)
$RUN "$BIN/pgbench" -h "$PWD" -c 4 -j 2 -T "$SECONDS_RUN" postgres
$RUN "$BIN/psql" -h "$PWD" -qc CHECKPOINT postgres
END=$($RUN "$BIN/psql" -h "$PWD" -Atc "SELECT pg_walfile_name(pg_current_wal_lsn())" postgres)
$RUN "$BIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null
trap - EXIT
if [ -n "${WALDUMP:-}" ]; then
    # pg_waldump stops with an error at the end of the written WAL: expected.
    "$BIN/pg_waldump" -p "$DATA/pg_wal" "$START" "$END" >"$WALDUMP" 2>"$WALDUMP.err" || true
fi
