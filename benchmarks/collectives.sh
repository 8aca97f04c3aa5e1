#!/bin/sh
# Regenerates benchmarks/results/collectives.json (sets up and builds build-bench if needed).
cd "$(dirname "$0")/.." && { [ -d build-bench ] || meson setup build-bench -Dbenchmarks=true; } && ninja -C build-bench benchmarks/bench_collectives && build-bench/benchmarks/bench_collectives benchmarks/results/collectives.json
