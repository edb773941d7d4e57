#!/usr/bin/env bash
# Makes sure the three real services tidepool's tests and split deployment use are up on loopback:
#   NATS with JetStream 127.0.0.1:4222, Redis 127.0.0.1:6379, PostgreSQL 127.0.0.1:5432 (trust auth).
# Starts each one that is down, installing it from Debian's packages when it is missing; also installs
# promtool (package prometheus) for the metrics and alert-rule tests, and Chromium for the console's browser test.
# Idempotent: running it again when everything is up changes nothing. Needs root for installs.
set -euo pipefail

log() { printf 'services: %s\n' "$*" >&2; }

apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    apt_updated=1
  fi
  log "installing $* from Debian's packages"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_for() { # name, probe command...
  local name=$1; shift
  for _ in $(seq 1 50); do
    if "$@" >/dev/null 2>&1; then log "$name is up"; return 0; fi
    sleep 0.2
  done
  log "$name did not come up"; return 1
}

nats_has_jetstream() {
  # The INFO line a NATS server sends on connect says whether JetStream is on.
  local info
  info=$(timeout 2 bash -c 'exec 3<>/dev/tcp/127.0.0.1/4222; head -n 1 <&3' 2>/dev/null || true)
  [[ $info == *'"jetstream":true'* ]]
}

ensure_nats() {
  if port_open 4222; then
    nats_has_jetstream || { log "a server on 4222 has no JetStream: restart it with -js"; return 1; }
    log "NATS (JetStream) already up"; return 0
  fi
  command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ] || apt_install nats-server
  mkdir -p /var/lib/nats-server /var/log
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- \
    -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log
  wait_for NATS nats_has_jetstream
}

ensure_redis() {
  if command -v redis-cli >/dev/null 2>&1 && redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
    log "Redis already up"; return 0
  fi
  command -v redis-server >/dev/null 2>&1 || apt_install redis-server
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  wait_for Redis redis-cli -h 127.0.0.1 -p 6379 ping
}

ensure_postgres() {
  if command -v pg_isready >/dev/null 2>&1 && pg_isready -q -h 127.0.0.1 -p 5432; then
    log "PostgreSQL already up"; return 0
  fi
  if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
    apt_install postgresql
  fi
  local version
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  local conf="/etc/postgresql/$version/main"
  # Trust auth on loopback, as the tests expect (local development and CI only).
  if ! grep -q '^host all all 127.0.0.1/32 trust' "$conf/pg_hba.conf"; then
    sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\nlocal all all trust' "$conf/pg_hba.conf"
  fi
  pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
  wait_for PostgreSQL pg_isready -q -h 127.0.0.1 -p 5432
}

ensure_promtool() {
  # Not a service: promtool (Debian package prometheus) checks the metric expositions and the alert
  # rules in the tests (engine/obs/*.test.ts).
  if command -v promtool >/dev/null 2>&1; then log "promtool already installed"; return 0; fi
  apt_install prometheus
  # The package also brings a Prometheus server that an init system would start on port 9090, the
  # quote service's metrics port: keep the tool, stop and disable the server.
  if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    systemctl disable --now prometheus >/dev/null 2>&1 || true
  elif [ -x /etc/init.d/prometheus ]; then
    /etc/init.d/prometheus stop >/dev/null 2>&1 || true
  fi
  command -v promtool >/dev/null 2>&1 || { log "promtool is still missing after installing prometheus"; return 1; }
}

ensure_tools() {
  # Not services: `npm run bench` drives the quote servers with wrk (throughput) and with
  # bench/loadgen/openloop.c, compiled with gcc at bench time (open-loop latency); the tests check
  # the protocols with the official compilers, protoc and flatc; the web console's browser test
  # drives Debian's headless Chromium (engine/console/console-browser.test.ts).
  local missing=()
  command -v wrk >/dev/null 2>&1 || missing+=(wrk)
  command -v gcc >/dev/null 2>&1 || missing+=(gcc)
  command -v protoc >/dev/null 2>&1 || missing+=(protobuf-compiler)
  command -v flatc >/dev/null 2>&1 || missing+=(flatbuffers-compiler)
  [ -x /usr/bin/chromium ] || missing+=(chromium)
  if [ ${#missing[@]} -eq 0 ]; then log "wrk, gcc, protoc, flatc and chromium already installed"; return 0; fi
  apt_install "${missing[@]}"
}

ensure_nats
ensure_redis
ensure_postgres
ensure_promtool
ensure_tools
