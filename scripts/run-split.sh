#!/usr/bin/env bash
# The split deployment on one machine (issues 5 and 6): the chain simulator, the RPC proxy, a
# scanner, a quote service, the external quote service, the quote aggregator, the market scanner,
# the planner and the executor as separate processes
# joined by the local NATS JetStream (127.0.0.1:4222, which scripts/services.sh ensures), on the
# default ports:
#   simulator  JSON-RPC :8899, ShredStream :9999, quote API / price API / faults :8890
#   rpc proxy  /rpc, /rpc/ws, /rpc/health, /rpc/metrics :8083, in front of the simulator's JSON-RPC;
#              the scanner and the quote service read the chain through it
#   scanner    health / stats / config :8081, metrics :9091
#   quote      GET /quote :8080, metrics :9090, gRPC StreamBatchQuotes :50052
#   external   gRPC StreamBatchQuotes :50053 (polling the simulator's /quote), health / metrics :9093
#   aggregator gRPC :50051, HTTP :8082 (8080 is the quote service's); SwapRouteEvents to NATS
#   market scanner  MarketEvents / PriceUpdates on market.events.> (MARKET_EVENTS); health :8086, metrics :9096
#   planner    arbitrage on the market events → trade.opportunities.arbitrage; /health /ready /metrics :8084
#              (embedded database in memory unless DATABASE_URL is set; REDIS_URL passes through)
#   executor   trade.opportunities.> → trades and execution.orders.<strategy>; /health /ready /metrics /stats :8085
#              EXECUTOR_MODE=paper (the default): paper trading, nothing sent, no wallets needed;
#              EXECUTOR_MODE=real: real transactions (bundles to the simulator's block engine :8890,
#              direct sends through the rpc proxy), signed by the worker wallets of DATABASE_URL
#              (set it, and TIDEPOOL_WALLET_PASSPHRASE; add wallets with `tidepool wallets`)
#   wallets    with DATABASE_URL and REDIS_URL set: `tidepool wallets serve`, balance syncs (and
#              rebalancing with TIDEPOOL_WALLET_PASSPHRASE) on its own; /health /ready /metrics :8089
# Ctrl-C (or SIGTERM) stops them all. Extra environment (LOG_LEVEL, BUS_CONSUMER_NAME, ...) passes through.
set -euo pipefail
cd "$(dirname "$0")/.."

[ -f dist/engine/cli/main.js ] || npm run build --silent
tidepool=(env MALLOC_ARENA_MAX=2 node --no-parallel-scavenge dist/engine/cli/main.js)
nats_url="${BUS_SERVERS:-nats://127.0.0.1:4222}"
(echo >/dev/tcp/127.0.0.1/4222) 2>/dev/null || [ "$nats_url" != "nats://127.0.0.1:4222" ] || {
  echo "run-split: no NATS on 127.0.0.1:4222; run scripts/services.sh first" >&2
  exit 1
}

work="$(mktemp -d)"
pids=()
stop() {
  trap - INT TERM EXIT
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap stop INT TERM EXIT

"${tidepool[@]}" sim --pools-out "$work/pools.json" &
pids+=($!)
for _ in $(seq 1 100); do [ -s "$work/pools.json" ] && break; sleep 0.1; done
[ -s "$work/pools.json" ] || { echo "run-split: the simulator did not start" >&2; exit 1; }

RPC_PROXY_ENDPOINTS=http://127.0.0.1:8899 "${tidepool[@]}" rpc-proxy &
pids+=($!)
for _ in $(seq 1 100); do (echo >/dev/tcp/127.0.0.1/8083) 2>/dev/null && break; sleep 0.1; done
(echo >/dev/tcp/127.0.0.1/8083) 2>/dev/null || { echo "run-split: the rpc proxy did not start" >&2; exit 1; }
rpc=http://127.0.0.1:8083/rpc

BUS_SERVERS="$nats_url" BLOCKSTREAM_HOST=127.0.0.1 BLOCKSTREAM_PORT=9999 RPC_ENDPOINTS="$rpc" \
  MONITORED_POOLS_FILE="$work/pools.json" "${tidepool[@]}" scanner &
pids+=($!)
BUS_SERVERS="$nats_url" RPC_ENDPOINTS="$rpc" "${tidepool[@]}" quote-service &
pids+=($!)
EXTERNAL_QUOTE_URL=http://127.0.0.1:8890/quote "${tidepool[@]}" external-quotes &
pids+=($!)
BUS_URL="$nats_url" AGGREGATOR_HTTP_PORT=8082 ORACLE_URL=http://127.0.0.1:8890/price/v3 "${tidepool[@]}" aggregator &
pids+=($!)

BUS_SERVERS="$nats_url" BLOCKSTREAM_HOST=127.0.0.1 BLOCKSTREAM_PORT=9999 RPC_ENDPOINTS="$rpc" \
  MONITORED_POOLS_FILE="$work/pools.json" "${tidepool[@]}" market-scanner --health-port 8086 --metrics-port 9096 &
pids+=($!)
BUS_SERVERS="$nats_url" RPC_ENDPOINTS="$rpc" MONITORED_POOLS_FILE="$work/pools.json" TIDEPOOL_DATA_DIR="${TIDEPOOL_DATA_DIR:-memory}" \
  "${tidepool[@]}" planner --strategy arbitrage &
pids+=($!)

executor_mode="${EXECUTOR_MODE:-paper}"
case "$executor_mode" in
  paper) paper=true ;;
  real)
    paper=false
    [ -n "${DATABASE_URL:-}" ] || { echo "run-split: EXECUTOR_MODE=real needs DATABASE_URL (the worker wallets' database)" >&2; exit 1; }
    ;;
  *) echo "run-split: EXECUTOR_MODE must be paper or real, got $executor_mode" >&2; exit 1 ;;
esac
BUS_SERVERS="$nats_url" RPC_ENDPOINTS="$rpc" BLOCK_ENGINE_URL=http://127.0.0.1:8890 PAPER_TRADING="$paper" \
  TIDEPOOL_DATA_DIR="${TIDEPOOL_DATA_DIR:-memory}" "${tidepool[@]}" executor &
pids+=($!)

wallets="not started (set DATABASE_URL and REDIS_URL)"
if [ -n "${DATABASE_URL:-}" ] && [ -n "${REDIS_URL:-}" ]; then
  rebalance=false
  [ -z "${TIDEPOOL_WALLET_PASSPHRASE:-}" ] || rebalance=true
  RPC_URL=http://127.0.0.1:8899 WALLETS_PORT=8089 WALLETS_REBALANCE="$rebalance" "${tidepool[@]}" wallets serve &
  pids+=($!)
  wallets="running (rebalancing: $rebalance)"
fi

echo "run-split: simulator, rpc proxy, scanner, quote service, external quote service, aggregator, market scanner, planner and executor ($executor_mode) running; wallet service $wallets; Ctrl-C stops them" >&2
echo "  nats sub 'trade.opportunities.>'      # opportunities as the planner publishes them" >&2
echo "  nats sub 'execution.orders.>'         # the executor's results (status paper in paper mode)" >&2
echo "  curl -s http://127.0.0.1:8085/stats   # the executor: trades, skips, the last results" >&2
echo "  curl -s -X POST http://127.0.0.1:8890/admin/market/price-gap -d '{\"pool\":\"<a pool of $work/pools.json>\",\"gapBps\":100}'" >&2
echo "  curl -s http://127.0.0.1:8083/rpc/health" >&2
echo "  curl -s 'http://127.0.0.1:8080/quote?input=So11111111111111111111111111111111111111112&output=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v&amount=1000000000'" >&2
echo "  ${tidepool[*]} aggregated-quote --input So11111111111111111111111111111111111111112 --output EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v --amount 1000000000" >&2
# Exit when any of them does (and stop the others).
wait -n "${pids[@]}"
