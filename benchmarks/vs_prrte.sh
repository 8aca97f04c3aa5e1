#!/usr/bin/env bash
# grove against PRRTE master, side by side, in one command (issue 14).
#
#   benchmarks/vs_prrte.sh [prrte_compare.py options...]
#
# 1. Installs grove's Debian packages if any is missing (.ci/install-deps).
# 2. Builds grove in BUILD (default build-release: release, -Dbenchmarks=true).
# 3. Builds PRRTE master and openpmix master once from ../shared/anchors
#    (build-prrte.sh, about 8 minutes) into PRRTE_PREFIX (default
#    ../prrte-install next to this checkout). The install is reused while
#    the anchors' tarballs are the same ones (a stamp file names them).
# 4. Runs benchmarks/prrte_compare.py: one namespace swarm (a real sshd per
#    host), both DVMs started from node0 on the same hosts, interleaved: DVM
#    start, `run -n N hostname` (last output, exit), collecting fences of 64 B
#    and 4 KiB per rank, barriers, a sequence of 1000 barriers, at 4, 8, 16
#    and 32 hosts; PRRTE DVMs that die are restarted and counted.
#
# Output: every figure and a table of ratios (PRRTE / grove) on stdout,
# progress on stderr, JSON in OUT (default benchmarks/results/vs_prrte.json).
# Needs root (network namespaces). Extra arguments go to prrte_compare.py,
# for example `--hosts 4,8 --starts 3`, or `--baseline OTHER_BUILD` to measure a
# second grove build alongside (before/after ratios from one run); `--help`
# shows them all.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
anchors=$(cd "$top/../shared/anchors" 2>/dev/null && pwd || true)
BUILD=${BUILD:-$top/build-release}
PRRTE_PREFIX=${PRRTE_PREFIX:-$(dirname "$top")/prrte-install}
OUT=${OUT:-$here/results/vs_prrte.json}

for arg in "$@"; do
  if [ "$arg" = --help ] || [ "$arg" = -h ]; then
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    echo "Environment: BUILD=$BUILD PRRTE_PREFIX=$PRRTE_PREFIX OUT=$OUT"
    echo
    exec python3 "$here/prrte_compare.py" --help
  fi
done

if [ "$(id -u)" -ne 0 ]; then
  echo "vs_prrte.sh: needs root (the hosts are network namespaces with their own sshd)" >&2
  exit 2
fi
if [ -z "$anchors" ] || [ ! -x "$anchors/build-prrte.sh" ]; then
  echo "vs_prrte.sh: no ../shared/anchors/build-prrte.sh next to this checkout ($top)" >&2
  exit 2
fi

missing=$(cat "$top/.ci/packages" "$top/.ci/packages-tests" | grep -Ev '^\s*(#|$)' | while read -r pkg; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || echo "$pkg"
done)
if [ -n "$missing" ]; then
  echo "== installing missing packages: $(echo $missing)" >&2
  "$top/.ci/install-deps" --tests >&2
fi

echo "== building grove in $BUILD" >&2
if [ ! -f "$BUILD/build.ninja" ]; then
  meson setup "$BUILD" "$top" --buildtype=release -Dbenchmarks=true >&2
elif ! grep -q '"name": "benchmarks", "value": true' "$BUILD/meson-info/intro-buildoptions.json"; then
  meson configure "$BUILD" -Dbenchmarks=true >&2  # the fence client is a benchmark target
fi
ninja -C "$BUILD" src/grove src/groved benchmarks/pmix_fence_bench >&2

stamp=$PRRTE_PREFIX/.grove-vs-prrte-anchors
wanted=$(cd "$anchors" && { ls ./*.tar.gz 2>/dev/null || true; } | sort | tr '\n' ' ')
if [ -z "$wanted" ]; then
  echo "vs_prrte.sh: no source tarballs (*.tar.gz) in $anchors to build PRRTE from" >&2
  exit 2
fi
if [ -x "$PRRTE_PREFIX/bin/prte" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ]; then
  echo "== PRRTE: reusing $PRRTE_PREFIX ($("$PRRTE_PREFIX/bin/prte" --version 2>&1 | grep -m1 . || true))" >&2
else
  echo "== building PRRTE and openpmix from $anchors into $PRRTE_PREFIX (about 8 minutes)" >&2
  nice -n 10 "$anchors/build-prrte.sh" "$PRRTE_PREFIX" >&2
  printf '%s' "$wanted" > "$stamp"
fi

echo "== grove and PRRTE both run on the same namespace hosts (one sshd each)" >&2
exec python3 "$here/prrte_compare.py" --build "$BUILD" --prrte-prefix "$PRRTE_PREFIX" \
  --out "$OUT" "$@"
