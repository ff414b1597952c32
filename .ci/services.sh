#!/usr/bin/env bash
# Start PostgreSQL and Redis when they are not answering (as root, with the
# machine's own packages). Idempotent.
set -euo pipefail

pg_up() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }
redis_up() { redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; }

if ! pg_up; then
  echo "starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
  for _ in $(seq 1 30); do pg_up && break; sleep 1; done
fi
if ! redis_up; then
  echo "starting Redis"
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no || true
  for _ in $(seq 1 30); do redis_up && break; sleep 1; done
fi
pg_up && echo "PostgreSQL: up" || { echo "PostgreSQL is not reachable on 127.0.0.1:5432"; exit 1; }
redis_up && echo "Redis: up" || { echo "Redis is not reachable on 127.0.0.1:6379"; exit 1; }
