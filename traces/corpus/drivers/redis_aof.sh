#!/bin/sh
# Redis 7 with its append-only file (appendfsync everysec), rewritten in the background
# whenever it has doubled since the last rewrite and passed 32 MB (a new base file
# written, the old base and increments deleted); redis-benchmark SETs of 256-byte values
# over 200,000 uniformly random keys, 8 clients, for SECONDS; then SHUTDOWN.
#
# usage: sh redis_aof.sh [SECONDS]
set -eu
SECONDS_RUN=${1:-30}
SOCK=$PWD/redis.sock
redis-server --port 0 --unixsocket "$SOCK" --dir "$PWD" --appendonly yes \
    --appendfsync everysec --save "" --auto-aof-rewrite-min-size 32mb \
    --daemonize yes --logfile "$PWD/redis.log" --pidfile "$PWD/redis.pid"
for _ in $(seq 100); do
    redis-cli -s "$SOCK" ping >/dev/null 2>&1 && break
    sleep 0.1
done
timeout "$SECONDS_RUN" redis-benchmark -s "$SOCK" -t set -r 200000 -d 256 -c 8 \
    -n 1000000000 -q >/dev/null 2>&1 || true
redis-cli -s "$SOCK" shutdown >/dev/null 2>&1 || true
while [ -e "$PWD/redis.pid" ]; do
    sleep 0.1
done
