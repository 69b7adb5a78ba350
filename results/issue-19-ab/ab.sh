#!/usr/bin/env bash
# usage: ab.sh <rounds> <binary>...: the read rows for each binary, alternating, <rounds> times.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rounds=$1; shift
for _ in $(seq 1 "$rounds"); do
  for bin in "$@"; do
    echo "$(basename "$bin") $("$here/run.sh" "$bin" reads --only ping,range,sort,proj,group | tr '\n' ' ')"
  done
done
