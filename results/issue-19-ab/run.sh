#!/usr/bin/env bash
# usage: run.sh <server binary> <phase> [reads.mjs options]: starts the binary on $MFDB_AB_DB
# (default /tmp/mfdb-ab/bench.mfdb), runs reads.mjs, stops it with SIGTERM.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
db=${MFDB_AB_DB:-/tmp/mfdb-ab/bench.mfdb}
mkdir -p "$(dirname "$db")"
bin=$1; phase=$2; shift 2
port=$(( 27100 + RANDOM % 500 ))
"$bin" --port $port --db "$db" --ttl-sweep-secs 0 > "$(dirname "$db")/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 200); do
  node -e "require('net').connect($port,'127.0.0.1',()=>process.exit(0)).on('error',()=>process.exit(1))" 2>/dev/null && break
  sleep 0.1
done
node "$here/reads.mjs" "$phase" "mongodb://127.0.0.1:$port" "$@" || { kill $pid; exit 1; }
kill -TERM $pid; wait $pid || true
