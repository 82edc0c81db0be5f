# Sourced by the Redis scripts in .ci/: installs redis-server when missing
# and starts a private one on a free loopback port, stopped on exit.
# The caller defines die() and sets $tag (a name for messages and temp dirs).
# After start_private_redis: $port, $workdir and $REDIS_ADDR are set.

export DEBIAN_FRONTEND=noninteractive

ensure_redis_installed() {
  if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1 || ! command -v redis-benchmark >/dev/null 2>&1; then
    echo "$tag: installing redis-server and redis-tools with apt-get"
    if ! { apt-get update -qq && apt-get install -y -qq redis-server redis-tools; } >"/tmp/labkit-$tag-apt.log" 2>&1; then
      die "cannot install redis-server with apt-get (log: /tmp/labkit-$tag-apt.log)"
    fi
  fi
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

stop_redis() {
  local pid
  pid=$(cat "$workdir/redis.pid" 2>/dev/null)
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null
    for _ in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
  fi
  rm -rf "$workdir"
}

start_private_redis() {
  ensure_redis_installed
  port=
  for p in ${REDIS_SUITE_PORT:-} 6390 6391 6392 6393 6394 6395 6396 6397 6398 6399; do
    if ! port_in_use "$p"; then port=$p; break; fi
  done
  [ -n "$port" ] || die "no free port in 6390-6399 on 127.0.0.1 for a private redis-server"

  workdir=$(mktemp -d "/tmp/labkit-$tag.XXXXXX")
  trap stop_redis EXIT
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
    --daemonize yes --pidfile "$workdir/redis.pid" --logfile "$workdir/redis.log" \
    --dir "$workdir" >/dev/null 2>&1 || die "cannot start redis-server on 127.0.0.1:$port"
  local ready=
  for _ in $(seq 100); do
    if [ "$(redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null)" = PONG ]; then ready=1; break; fi
    sleep 0.1
  done
  [ -n "$ready" ] || die "redis-server on 127.0.0.1:$port did not answer PING within 10s ($(tail -n 3 "$workdir/redis.log" 2>/dev/null | tr '\n' ' '))"
  export REDIS_ADDR=127.0.0.1:$port
}
