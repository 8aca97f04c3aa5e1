#!/bin/sh
# Writes test/multinode/prrte_job_keys.txt: the keys a rank gets right after
# PMIx_Init under PRRTE's prterun, as test/clients/pmix_key_dump asks for
# them ("SCOPE KEY" per line, rank 0's, sorted). The multinode test "every
# key PRRTE registers for a job is there, or documented as absent" compares
# grove against this file.
#
# Usage: test/multinode/prrte_job_keys.sh PRRTE_PREFIX [BUILD_DIR]
#   PRRTE_PREFIX: an install from ../shared/anchors/build-prrte.sh PREFIX
set -eu
if [ $# -lt 1 ] || [ ! -x "$1/bin/prterun" ]; then
  echo "usage: $0 PRRTE_PREFIX [BUILD_DIR] (PRRTE_PREFIX/bin/prterun must exist)" >&2
  exit 2
fi
prefix=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${2:-$top/build}
dump=$build/test/clients/pmix_key_dump
[ -x "$dump" ] || { echo "$0: $dump is missing: build grove first" >&2; exit 2; }
out=$top/test/multinode/prrte_job_keys.txt
lines=$(mktemp -t grove-prrte-keys.XXXXXX)
trap 'rm -f "$lines"' EXIT
# prterun exports PREFIX/lib, whose libpmix shares Debian's soname: the
# client keeps Debian's, as under grove.
PRTE_ALLOW_RUN_AS_ROOT=1 PRTE_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 60 \
  "$prefix/bin/prterun" -n 2 env -u LD_LIBRARY_PATH "$dump" > "$lines"
version=$("$prefix/bin/prterun" --version 2>/dev/null | grep -m 1 .)
{
  echo "# What a rank gets under $version with Debian's libpmix (pmix_key_dump, rank 0)."
  echo "# Made by test/multinode/prrte_job_keys.sh on $(date -u +%Y-%m-%d); do not edit."
  sed -n 's/^rank 0: \([a-z]*\) \([^ ]*\) = .*/\1 \2/p' "$lines" | sort
} > "$out"
echo "wrote $out ($(grep -vc '^#' "$out") keys)"
