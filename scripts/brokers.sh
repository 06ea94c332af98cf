#!/usr/bin/env bash
# Start or stop the three brokers `scenario-run conform` checks the model
# against: RabbitMQ, Redis and NATS (with JetStream), each from the
# distribution's package, each on 127.0.0.1 only, each with its own data
# folder under $BROKERS_DIR (default target/brokers). Nothing listens on any
# other address: RabbitMQ's AMQP listener, its Erlang distribution port and
# epmd are all bound to loopback.
#
#   scripts/brokers.sh install   # apt-get install the three packages
#   scripts/brokers.sh start     # start the three, wait until each answers
#   scripts/brokers.sh status    # which ones answer; every listener on loopback
#   scripts/brokers.sh stop      # stop the three, keep their logs
#
# Ports: AMQP 5672, Redis 6379, NATS 4222 (override with AMQP_PORT,
# REDIS_PORT, NATS_PORT). The URLs to give `conform` are printed by `start`.
set -euo pipefail
cd "$(dirname "$0")/.."

dir="${BROKERS_DIR:-$PWD/target/brokers}"
amqp_port="${AMQP_PORT:-5672}"
redis_port="${REDIS_PORT:-6379}"
nats_port="${NATS_PORT:-4222}"
rabbit_dist_port=$((amqp_port + 20000))
node="scenario-run-$amqp_port@localhost"
rabbit_bin="/usr/lib/rabbitmq/bin"
export ERL_EPMD_ADDRESS=127.0.0.1

rabbit_env() {
  export RABBITMQ_NODENAME="$node"
  export RABBITMQ_NODE_IP_ADDRESS=127.0.0.1
  export RABBITMQ_NODE_PORT="$amqp_port"
  export RABBITMQ_DIST_PORT="$rabbit_dist_port"
  export RABBITMQ_MNESIA_BASE="$dir/rabbitmq/mnesia"
  export RABBITMQ_LOG_BASE="$dir/rabbitmq/log"
  export RABBITMQ_PID_FILE="$dir/rabbitmq/rabbitmq.pid"
  export RABBITMQ_ENABLED_PLUGINS_FILE="$dir/rabbitmq/enabled_plugins"
  export RABBITMQ_CONFIG_FILE="$dir/rabbitmq/rabbitmq"
  export RABBITMQ_ADVANCED_CONFIG_FILE="$dir/rabbitmq/advanced.config"
  export RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
}

# Waits until a TCP port on 127.0.0.1 accepts a connection.
wait_port() {
  local name="$1" port="$2" tries="$3"
  for _ in $(seq "$tries"); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      return 0
    fi
    sleep 0.1
  done
  echo "brokers: $name did not answer on 127.0.0.1:$port (logs in $dir)" >&2
  return 1
}

install() {
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  # The packages' own services must not start (they would listen on every
  # address and hold the ports): this script starts its own, on loopback,
  # with their own data folders. Debian's policy-rc.d says so to every
  # package's installer; one is put in place for the install when the
  # machine has none.
  local policy=/usr/sbin/policy-rc.d made=""
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
    $sudo chmod 755 "$policy"
    made=1
  fi
  $sudo env DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 apt-get install -y -qq \
    rabbitmq-server redis-server nats-server >/dev/null
  if [ -n "$made" ]; then $sudo rm -f "$policy"; fi
}

start() {
  mkdir -p "$dir/rabbitmq/mnesia" "$dir/rabbitmq/log" "$dir/redis" "$dir/nats"
  local began
  began=$(date +%s%N)

  # Redis: no persistence, loopback only.
  redis-server --bind 127.0.0.1 --port "$redis_port" --dir "$dir/redis" \
    --daemonize yes --pidfile "$dir/redis/redis.pid" \
    --logfile "$dir/redis/redis.log" --save '' --appendonly no \
    --protected-mode yes >/dev/null

  # NATS with JetStream, its stream store in its own folder.
  nats-server -a 127.0.0.1 -p "$nats_port" -js -sd "$dir/nats/store" \
    -P "$dir/nats/nats.pid" -l "$dir/nats/nats.log" >/dev/null 2>&1 &
  disown || true

  # RabbitMQ: no plugins, listeners on loopback.
  rabbit_env
  printf '[].\n' >"$RABBITMQ_ENABLED_PLUGINS_FILE"
  cat >"$RABBITMQ_CONFIG_FILE.conf" <<CONF
listeners.tcp.default = 127.0.0.1:$amqp_port
loopback_users = none
log.console = false
log.file.level = warning
CONF
  printf '[].\n' >"$RABBITMQ_ADVANCED_CONFIG_FILE"
  "$rabbit_bin/rabbitmq-server" >"$dir/rabbitmq/log/startup.log" 2>&1 &
  disown || true

  wait_port redis "$redis_port" 100
  wait_port nats "$nats_port" 100
  wait_port rabbitmq "$amqp_port" 600
  echo "brokers: ready in $(( ($(date +%s%N) - began) / 1000000 )) ms"
  echo "  amqp://127.0.0.1:$amqp_port  redis://127.0.0.1:$redis_port  nats://127.0.0.1:$nats_port"
}

stop() {
  rabbit_env
  if [ -f "$RABBITMQ_PID_FILE" ]; then
    "$rabbit_bin/rabbitmqctl" -n "$node" stop >/dev/null 2>&1 \
      || kill "$(cat "$RABBITMQ_PID_FILE")" 2>/dev/null || true
    rm -f "$RABBITMQ_PID_FILE"
  fi
  # epmd outlives the node; stop it when no other node is registered.
  if ! epmd -names 2>/dev/null | grep -q '^name '; then
    epmd -kill >/dev/null 2>&1 || true
  fi
  for pidfile in "$dir/redis/redis.pid" "$dir/nats/nats.pid"; do
    if [ -f "$pidfile" ]; then
      kill "$(cat "$pidfile")" 2>/dev/null || true
      rm -f "$pidfile"
    fi
  done
  echo "brokers: stopped"
}

status() {
  local code=0
  for pair in "rabbitmq:$amqp_port" "redis:$redis_port" "nats:$nats_port"; do
    if (exec 3<>"/dev/tcp/127.0.0.1/${pair#*:}") 2>/dev/null; then
      echo "${pair%%:*}: up on 127.0.0.1:${pair#*:}"
    else
      echo "${pair%%:*}: down"
      code=1
    fi
  done
  # Every listening socket of these servers (RabbitMQ's beam and epmd
  # included) is on a loopback address.
  if command -v ss >/dev/null 2>&1; then
    local outside
    outside=$(ss -ltnpH 2>/dev/null \
      | grep -E '"(beam\.smp|epmd|redis-server|nats-server)"' \
      | awk '{print $4}' | grep -vE '^(127\.[0-9.]+|\[::1\]):[0-9]+$' || true)
    if [ -n "$outside" ]; then
      echo "brokers: listening beyond loopback: $outside" >&2
      code=1
    else
      echo "brokers: every listener is on loopback"
    fi
  else
    echo "brokers: ss is missing: listeners not checked" >&2
  fi
  return $code
}

case "${1:-}" in
  install) install ;;
  start) start ;;
  stop) stop ;;
  status) status ;;
  *)
    echo "usage: scripts/brokers.sh install|start|stop|status" >&2
    exit 2
    ;;
esac
