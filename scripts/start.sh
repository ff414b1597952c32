#!/usr/bin/env bash
# `npm start`: the whole hashq system on this machine, API and one worker.
#
# PostgreSQL and Redis: the ones in DATABASE_URL / REDIS_URL when set; else the local servers on
# the default ports; else private ones started from this machine's binaries under .data/ (ports
# HASHQ_PG_PORT=55432, HASHQ_REDIS_PORT=56379). Where the binaries are missing it installs them
# with apt-get (Debian/Ubuntu, as root) or prints what to run. Then: npm ci (if needed), build,
# create the database, apply migrations, start the API and a worker, print the URLs.
# Hash states are sealed at rest: without HASHQ_STATE_KEYS it makes a key once and keeps it in
# .data/state-keys (mode 0600; losing it fails the unfinished jobs with STATE_INVALID).
# The API asks for keys: it listens on 127.0.0.1 (HOST) and the first start makes an admin key of
# the default tenant in .data/api-key (mode 0600; `npm run keys` makes more); the demo job uses it.
# Ctrl-C stops everything it started.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DATA=$ROOT/.data
PG_PORT=${HASHQ_PG_PORT:-55432}
REDIS_PORT=${HASHQ_REDIS_PORT:-56379}
STARTED_PG=""
STARTED_REDIS=""
CHILDREN=()

# This script's own lines take the services' form (@hashq/config's createLogger): readable, with
# an ISO 8601 UTC time, when stdout is a terminal; JSON lines otherwise.
if [ -t 1 ]; then PRETTY=1; else PRETTY=""; fi
TIME_FORMAT=+%Y-%m-%dT%H:%M:%S.%3NZ
[[ $(date -u +%3N) =~ ^[0-9]{3}$ ]] || TIME_FORMAT=+%Y-%m-%dT%H:%M:%SZ # BSD date: whole seconds
json_string() {
  local s=${1//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\n'/\\n}
  s=${s//$'\t'/\\t}
  printf '"%s"' "$s"
}
emit() { # emit <pino level> <label> <message>
  local time
  time=$(date -u "$TIME_FORMAT")
  if [ -n "$PRETTY" ]; then
    printf '[%s] %s (start/%s): %s\n' "$time" "$2" "$$" "$3"
  else
    printf '{"level":%s,"time":"%s","pid":%s,"service":"start","name":"start","msg":%s}\n' \
      "$1" "$time" "$$" "$(json_string "$3")"
  fi
}
log() { emit 30 INFO "$*"; }
die() { emit 50 ERROR "$*" >&2; exit 1; }
services() { node scripts/services.cjs "$@"; }

# PostgreSQL refuses to run as root: run its tools as the "postgres" user then.
as_pg() {
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || die "running as root and there is no 'postgres' user to run a private PostgreSQL"
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

pg_bindir() {
  if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
    dirname "$(command -v initdb)"
    return
  fi
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  [ -n "$dir" ] && [ -x "$dir/initdb" ] && echo "$dir"
}

install_servers() {
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "PostgreSQL/Redis binaries missing: installing postgresql and redis-server with apt-get"
    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql redis-server
    return
  fi
  die "$(cat <<MSG
No PostgreSQL/Redis found (DATABASE_URL/REDIS_URL unset, nothing on 127.0.0.1:5432/6379,
  and no postgres/redis-server binaries to start private ones). Install them, e.g.:
    Debian/Ubuntu:  sudo apt-get install -y postgresql redis-server
    Fedora:         sudo dnf install -y postgresql-server redis
    macOS:          brew install postgresql@16 redis
  then run \`npm start\` again. Or run everything in containers:
    docker compose -f docker/compose.yml up --build
MSG
)"
}

start_private_postgres() {
  local bin
  bin=$(pg_bindir || true)
  if [ -z "$bin" ]; then install_servers; bin=$(pg_bindir || true); fi
  [ -n "$bin" ] || die "initdb/pg_ctl not found even after installing PostgreSQL"
  local pgdata=$DATA/postgres
  mkdir -p "$pgdata"
  [ "$(id -u)" = 0 ] && chown postgres "$pgdata" && chmod 700 "$pgdata"
  if [ ! -s "$pgdata/PG_VERSION" ]; then
    log "initializing a private PostgreSQL in $pgdata"
    as_pg "$bin/initdb" -D "$pgdata" -U postgres --auth=trust >/dev/null
  fi
  if ! as_pg "$bin/pg_ctl" -D "$pgdata" status >/dev/null 2>&1; then
    log "starting the private PostgreSQL on 127.0.0.1:$PG_PORT"
    as_pg "$bin/pg_ctl" -D "$pgdata" -l "$pgdata/server.log" -w \
      -o "-p $PG_PORT -c listen_addresses=127.0.0.1 -k $pgdata" start >/dev/null
    STARTED_PG="$bin/pg_ctl -D $pgdata"
  fi
  DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/hashq"
}

start_private_redis() {
  command -v redis-server >/dev/null 2>&1 || install_servers
  command -v redis-server >/dev/null 2>&1 || die "redis-server not found even after installing it"
  mkdir -p "$DATA/redis"
  log "starting a private Redis on 127.0.0.1:$REDIS_PORT (data in $DATA/redis)"
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$DATA/redis" --appendonly yes \
    --daemonize yes --pidfile "$DATA/redis/redis.pid" --logfile "$DATA/redis/redis.log"
  STARTED_REDIS="$DATA/redis/redis.pid"
  REDIS_URL="redis://127.0.0.1:$REDIS_PORT"
  for _ in $(seq 1 50); do services redis-ready "$REDIS_URL" && return; sleep 0.1; done
  die "the private Redis did not start, see $DATA/redis/redis.log"
}

stop_all() {
  trap - EXIT INT TERM
  if [ ${#CHILDREN[@]} -gt 0 ]; then
    log "stopping api and worker"
    kill -TERM "${CHILDREN[@]}" 2>/dev/null || true
    wait "${CHILDREN[@]}" 2>/dev/null || true
  fi
  if [ -n "$STARTED_REDIS" ] && [ -s "$STARTED_REDIS" ]; then kill "$(cat "$STARTED_REDIS")" 2>/dev/null || true; fi
  if [ -n "$STARTED_PG" ]; then as_pg $STARTED_PG -m fast stop >/dev/null 2>&1 || true; fi
}

# 1. dependencies (the native addon is compiled by npm ci)
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  log "installing dependencies: npm ci"
  npm ci
fi

trap stop_all EXIT
trap 'exit 130' INT TERM

# 2. PostgreSQL and Redis
if [ -n "${DATABASE_URL:-}" ]; then
  services pg-ready "$DATABASE_URL" || die "DATABASE_URL=$DATABASE_URL does not answer"
elif services pg-ready postgres://postgres@127.0.0.1:5432/hashq; then
  DATABASE_URL=postgres://postgres@127.0.0.1:5432/hashq
else
  start_private_postgres
fi
if [ -n "${REDIS_URL:-}" ]; then
  services redis-ready "$REDIS_URL" || die "REDIS_URL=$REDIS_URL does not answer"
elif services redis-ready redis://127.0.0.1:6379; then
  REDIS_URL=redis://127.0.0.1:6379
else
  start_private_redis
fi
export DATABASE_URL REDIS_URL
log "PostgreSQL: $DATABASE_URL"
log "Redis:      $REDIS_URL"

# 3. the state key (kept beside the private servers' data), build, database, migrations
if [ -z "${HASHQ_STATE_KEYS:-}" ]; then
  KEYS_FILE=$DATA/state-keys
  if [ ! -s "$KEYS_FILE" ]; then
    mkdir -p "$DATA"
    (umask 077 && node -e "process.stdout.write('local1:' + require('crypto').randomBytes(32).toString('base64'))" \
      > "$KEYS_FILE")
    log "made a state key in $KEYS_FILE (hash states are sealed with it; keep it with the database)"
  fi
  chmod 600 "$KEYS_FILE"
  HASHQ_STATE_KEYS=$(cat "$KEYS_FILE")
  export HASHQ_STATE_KEYS
  log "state keys: $KEYS_FILE"
fi

log "building (nest build api, worker)"
npm run --silent build
CREATED=$(services ensure-database "$DATABASE_URL")
if [ -n "$CREATED" ]; then log "created database $CREATED"; fi
node dist/libs/database/src/migrate-cli.js
if [ -z "${HASHQ_FILE_ROOTS:-}" ]; then mkdir -p "$ROOT/data"; fi
export HOST=${HOST:-127.0.0.1}
API_KEY_FILE=$DATA/api-key
mkdir -p "$DATA"
node dist/apps/api/src/auth/keys-cli.js local-key "$API_KEY_FILE"
HASHQ_API_KEY=$(cat "$API_KEY_FILE")
export HASHQ_API_KEY

# 4. the API and one worker
node --max-semi-space-size=4 dist/apps/api/main.js & # young-generation size: docs/digest-sessions.md
CHILDREN+=($!)
node dist/apps/worker/main.js &
CHILDREN+=($!)
URL="http://127.0.0.1:${PORT:-3000}"
services wait-http "$URL/health" 90 || die "the API did not become healthy"
log "up and running (Ctrl-C stops it)"
log "  API      $URL/v1/jobs   (an admin key is in $API_KEY_FILE)"
log "           curl -H \"Authorization: Bearer \$(cat $API_KEY_FILE)\" $URL/v1/jobs"
log "  OpenAPI  $URL/docs"
log "  health   $URL/health"
log "  metrics  $URL/metrics"
log "  files    ${HASHQ_FILE_ROOTS:-$ROOT/data}   (the only folders jobs may read)"
# 5. the main job: hash a file through the system and check the digests
# (HASHQ_DEMO=0 skips it; HASHQ_DEMO_BYTES sets the file size)
if [ "${HASHQ_DEMO:-1}" != 0 ]; then
  DEMO_ROOT=${HASHQ_FILE_ROOTS:-$ROOT/data}
  node "$ROOT/scripts/demo-job.cjs" "$URL" "${DEMO_ROOT%%[,:]*}" || log "the demo job failed (the system keeps running)"
fi
# Stop everything as soon as one of the two exits.
wait -n "${CHILDREN[@]}"
die "a process exited; stopping"
