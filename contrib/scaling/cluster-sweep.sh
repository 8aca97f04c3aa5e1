#!/bin/sh
# The cluster sweep: fits the release cost model's alpha, c and B from flat
# releases on a real cluster (--hostfile FILE) or a namespace swarm
# (--swarm N [--egress RATE]), and prints the radix `grove model` recommends.
# All options: contrib/scaling/sweep.py --help; docs/benchmarks.md.
exec python3 "$(dirname "$0")/sweep.py" "$@"
