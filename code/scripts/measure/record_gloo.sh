#!/usr/bin/env bash
# Record the gloo data of code/commbook/data/measured/gloo/: p = 2, 3, 4 CPU ranks on this machine, every
# collective, 1 KiB to 64 MiB by factors of 4, median of 5 repeats of 10 timed calls.
# Writes gloo_p{p}.log (the table as printed), gloo_p{p}_{collective}.json and
# gloo_p{p}.env (load average before/after, machine) into code/commbook/data/measured/gloo/ (or $1).
# Usage: code/scripts/measure/record_gloo.sh [OUTDIR]   (from the repository root)
set -euo pipefail
OUT=${1:-code/commbook/data/measured/gloo}
PY=${PY:-.venv/bin/python}
mkdir -p "$OUT"
for p in 2 3 4; do
  port=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  {
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "cpus: $(nproc) ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
    echo "loadavg before: $(cut -d' ' -f1-3 /proc/loadavg)"
  } > "$OUT/gloo_p$p.env"
  GLOO_SOCKET_IFNAME=lo OMP_NUM_THREADS=1 timeout 3600 \
    $PY -m torch.distributed.run --nnodes=1 --nproc-per-node=$p --master-addr=127.0.0.1 --master-port=$port \
    code/scripts/measure/bench_collectives.py --backend gloo --ops all -b 1K -e 64M -f 4 \
    -w 3 -n 10 --repeats 5 --timeout 600 --hide-hostnames \
    --json "$OUT/gloo_p{p}_{collective}.json" > "$OUT/gloo_p$p.log"
  echo "loadavg after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/gloo_p$p.env"
done
