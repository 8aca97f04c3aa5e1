#!/usr/bin/env python3
"""fence_crossover.py - a fence's shapes measured side by side, with the simulator and the model.

On N daemons (a namespace swarm with every node's egress limited, or a real
cluster) three DVMs run at once: fences over radix 64 flat both ways
(`grpcomm_low_radix_release false`), over the two trees (radix 64 up, the
derived radix-4 release tree down) and as a Bruck exchange
(`grpcomm_fence_topology bruck`). Each aggregate D is a job of N ranks, one
per node, of the PMIx fence benchmark (test/clients/pmix_fence_bench: every
rank puts D/N bytes and fences with PMIX_COLLECT_DATA; rank 0 reports its
median fence time); the jobs alternate between the DVMs, the order flipped
each batch, so all three see the same machine. Beside each median:

  sim    `grove sim --nic-sharing fair --jitter 0` of the same N, aggregate
         and shape: its fence time (first contribution to last daemon done)
  model  `grove model --fence`: the whole fence as a line in D

with alpha, c and B from --constants (a crossover.py JSON measured on the
same nodes: its calibrated constants) or the flat-release fit made here.
Frames are read from every daemon's engine accounting (`grove status
--json`) before and after each job: per fence, the rollups and release
frames of the trees and the exchange frames of Bruck, which must equal the
simulator's (a mismatch is printed and ends the run with status 1).

Writes JSON (--json) and, with gnuplot, a PNG (--plot). docs/benchmarks.md
has a run and the command that made it.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import sweep  # noqa: E402  (Where, start/stop, the fit)
from crossover import crossover  # noqa: E402  (where a challenger wins from, on log(size))

SHAPES = {
    # name: (DVM parameters, grove sim options, grove model column)
    'flat': ({'rml_base_radix': 64, 'grpcomm_low_radix_release': 'false'},
             ['--radix', '64', '--low-radix-release', 'false'], 'flat_us'),
    'trees': ({'rml_base_radix': 64, 'rml_base_radix2': 4, 'grpcomm_low_radix_release': 'true'},
              ['--radix', '64', '--radix2', '4', '--low-radix-release', 'true'], 'trees_us'),
    'bruck': ({'rml_base_radix': 64, 'grpcomm_fence_topology': 'bruck'},
              ['--radix', '64', '--fence-topology', 'bruck'], 'bruck_us'),
}
FENCE_LINE = re.compile(r'fence_bench bytes=(\d+) .*? median_us=([\d.]+) ')
# Frame kinds a fence costs: (type, tag). Not the releases' acks: a job's
# wait to share frames (grpcomm_release_ack_delay_us), so their count is the
# machine's timing, not the shape's.
FENCE_FRAMES = [('fence-rollup', 'fence-rollup'), ('xcast-data', 'fence-release'),
                ('fence-exchange', 'fence-exchange')]
# Fences per benchmark job beside the timed rounds: one warm-up, and two
# barriers around the ranks' final reads.
FENCES_BESIDE_TIMED = 3


def fence_frames(status):
    counts = []
    for kind, tag in FENCE_FRAMES:
        counts.append(sum(e['frames'] for e in status['engine_total']
                          if e['type'] == kind and e['tag'] == tag))
    return counts


def status(where, grove, dvm):
    out = where.run([grove, 'status', '--dvm', dvm, '--json'])
    if out.returncode != 0:
        raise RuntimeError(f'grove status: {out.stderr.strip()}')
    return json.loads(out.stdout)


def fence_job(where, grove, dvm, client, daemons, share, rounds):
    """One job of N ranks fencing `rounds` times with `share` bytes each: rank 0's median (us)."""
    argv = [grove, 'run', '--dvm', dvm, '-n', str(daemons), '--map-by', 'node', client,
            '--bytes', str(share), '--rounds', str(rounds)]
    out = where.run(argv, timeout=900)
    found = FENCE_LINE.search(out.stdout)
    if out.returncode != 0 or not found:
        raise RuntimeError(f'grove run {client}: exit {out.returncode}: {out.stderr.strip()[-400:]}')
    return float(found.group(2))


def simulate(grove, daemons, aggregate, shape, constants):
    argv = [grove, 'sim', '-n', str(daemons), '--payload', str(aggregate), *SHAPES[shape][1],
            '--alpha', f"{max(constants['alpha_us'], 0.1):.3f}",
            '--copy-cost', f"{constants['c_us']:.3f}", '-t', '1',
            '-B', f"{constants['bandwidth_gbit_s']:.6f}", '--jitter', '0', '--nic-sharing', 'fair',
            '--json']
    result = json.loads(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)
    frames = []
    for kind, tag in FENCE_FRAMES:
        frames.append(sum(t['frames'] for t in result['traffic']
                          if t['type'] == kind and t['tag'] == tag))
    return {'fence_us': result['fence']['p50_us'], 'frames': frames}


def model(grove, daemons, aggregate, constants):
    argv = [grove, 'model', '--fence', '-N', str(daemons), '-M', str(aggregate),
            '--alpha', f"{max(constants['alpha_us'], 0.1):.3f}",
            '--copy-cost', f"{constants['c_us']:.3f}", '-t', '1',
            '-B', f"{constants['bandwidth_gbit_s']:.6f}", '--json']
    out = json.loads(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)
    cell = out['cells'][0]
    return {name: cell[spec[2]] for name, spec in SHAPES.items()}, out['crossovers'][0]


def plot(rows, path):
    if shutil.which('gnuplot') is None:
        print('fence_crossover: no gnuplot here, no plot written', file=sys.stderr)
        return False
    data = path + '.dat'
    with open(data, 'w') as f:
        for r in rows:
            f.write(' '.join(str(x) for x in [r['aggregate']] +
                             [r['measured_us'][s] for s in SHAPES] +
                             [r['sim_us'][s] for s in SHAPES] +
                             [r['model_us'][s] for s in SHAPES]) + '\n')
    lines = []
    for i, name in enumerate(SHAPES):
        lines.append(f'"{data}" using 1:{2 + i} with linespoints pt 7 lc {i + 1} '
                     f'title "measured, {name}"')
        lines.append(f'"{data}" using 1:{5 + i} with lines dt 2 lc {i + 1} title "grove sim, {name}"')
        lines.append(f'"{data}" using 1:{8 + i} with lines dt 3 lc {i + 1} title "model, {name}"')
    script = f'''set terminal pngcairo size 900,560 dashed
set output "{path}"
set xlabel "fence aggregate D (bytes)"
set ylabel "fence time at rank 0 (us)"
set logscale xy
set key left top
plot {", ".join(lines)}
'''
    subprocess.run(['gnuplot'], input=script, text=True, check=True)
    os.remove(data)
    return True


def measure_all(args, where, grove, client, sizes):
    """Per aggregate: spans by shape, and fence frames per fence by shape."""
    daemons = len(where.hosts)
    dvms, measured, frames = {}, {}, {}
    try:
        for name, (params, _, _) in SHAPES.items():
            dvms[name] = sweep.start_dvm(where, grove, daemons, params, name)
        for aggregate in sizes:
            share = max(aggregate // daemons, 1)
            medians = {name: [] for name in SHAPES}
            counted = {}
            for turn in range(args.repeats):
                order = list(SHAPES) if turn % 2 == 0 else list(reversed(list(SHAPES)))
                for name in order:
                    before = fence_frames(status(where, grove, dvms[name]))
                    medians[name].append(fence_job(where, grove, dvms[name], client, daemons,
                                                   share, args.rounds))
                    after = fence_frames(status(where, grove, dvms[name]))
                    counted[name] = [(a - b) / (args.rounds + FENCES_BESIDE_TIMED)
                                     for a, b in zip(after, before)]
            measured[aggregate] = {name: statistics.median(v) for name, v in medians.items()}
            frames[aggregate] = counted
            print(f'{aggregate:>9} B  measured ' + '  '.join(
                f'{name} {measured[aggregate][name]:10.0f} us' for name in SHAPES), flush=True)
    finally:
        for dvm in dvms.values():
            sweep.stop_dvm(where, grove, dvm)
    return measured, frames


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0], epilog=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sweep.add_where_arguments(parser)
    parser.add_argument('--sizes', default='33,1KB,10KB,100KB,1MB,10MB',
                        help='fence aggregates D (default 33,1KB,10KB,100KB,1MB,10MB)')
    parser.add_argument('--rounds', type=int, default=10, help='timed fences per job (default 10)')
    parser.add_argument('--repeats', type=int, default=3,
                        help='jobs per aggregate and shape, alternating (median; default 3)')
    parser.add_argument('--constants', metavar='JSON',
                        help="a crossover.py JSON whose calibrated constants to use "
                             "(default: a flat-release fit here)")
    parser.add_argument('--client', help='the pmix_fence_bench binary '
                                         '(default: build/test/clients/pmix_fence_bench)')
    parser.add_argument('--json', default=os.path.join(sweep.TOP, 'benchmarks', 'results',
                                                       'fence-crossover.json'))
    parser.add_argument('--plot', help='PNG path (needs gnuplot)')
    args = parser.parse_args()
    if args.egress and not args.swarm:
        parser.error('--egress needs --swarm')
    try:
        sizes = sorted({sweep.parse_size(x) for x in args.sizes.split(',')})
    except (ValueError, argparse.ArgumentTypeError) as error:
        parser.error(str(error))
    if args.repeats < 1 or args.rounds < 1:
        parser.error('--repeats and --rounds must be at least 1')
    grove = args.grove or (os.path.join(sweep.TOP, 'build', 'src', 'grove')
                           if args.swarm else 'grove')
    client = args.client or os.path.join(sweep.TOP, 'build', 'test', 'clients', 'pmix_fence_bench')
    constants = None
    if args.constants:
        with open(args.constants) as f:
            constants = json.load(f)['constants']

    where = sweep.Where(args)
    try:
        daemons = len(where.hosts)
        if constants is None:
            counts = [n for n in (2, 4, 8, 16) if n <= daemons]
            fit_results = {n: sweep.measure(where, grove, n, [33, 1000 ** 2], 10) for n in counts}
            constants = sweep.fit_constants(fit_results, counts, 33, 1000 ** 2)
        measured, frames = measure_all(args, where, grove, client, sizes)
    finally:
        where.close()

    rows = []
    for aggregate in sizes:
        modelled, advice = model(grove, daemons, aggregate, constants)
        row = {'aggregate': aggregate, 'measured_us': measured[aggregate],
               'frames_per_fence': frames[aggregate], 'sim_us': {}, 'sim_frames': {},
               'model_us': modelled, 'sim_error': {}, 'model_error': {}}
        for name in SHAPES:
            simulated = simulate(grove, daemons, aggregate, name, constants)
            row['sim_us'][name] = simulated['fence_us']
            row['sim_frames'][name] = simulated['frames']
            row['sim_error'][name] = simulated['fence_us'] / measured[aggregate][name] - 1
            row['model_error'][name] = modelled[name] / measured[aggregate][name] - 1
        rows.append(row)
        print(f'{aggregate:>9} B  ' + ' | '.join(
            f"{name}: measured {row['measured_us'][name]:9.0f} sim {row['sim_us'][name]:9.0f} "
            f"model {row['model_us'][name]:9.0f}" for name in SHAPES) + '  (us)', flush=True)
    mismatched = [(r['aggregate'], name) for r in rows for name in SHAPES
                  if r['frames_per_fence'][name] != r['sim_frames'][name]]
    for aggregate, name in mismatched:
        row = [r for r in rows if r['aggregate'] == aggregate][0]
        print(f'frames per fence differ at {aggregate} B, {name}: real '
              f"{row['frames_per_fence'][name]}, simulated {row['sim_frames'][name]}",
              file=sys.stderr)
    summary = {}
    for kind in ('measured_us', 'sim_us', 'model_us'):
        summary[kind] = crossover(sizes, [r[kind]['trees'] for r in rows],
                                  [r[kind]['bruck'] for r in rows])
    print('Bruck beats the two trees from: ' + ', '.join(
        f"{kind[:-3]} {'%.0f B' % v if v else 'none in range'}" for kind, v in summary.items()))
    report = {'date': time.strftime('%Y-%m-%d'), 'where': 'swarm' if args.swarm else 'hostfile',
              'egress': args.egress, 'daemons': daemons, 'rounds': args.rounds,
              'repeats': args.repeats, 'constants': constants, 'rows': rows,
              'bruck_beats_trees_from_bytes': summary, 'frames_match': not mismatched}
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, 'w') as f:
        json.dump(report, f, indent=2)
    print(f'written: {args.json}')
    if args.plot and plot(rows, args.plot):
        print(f'written: {args.plot}')
    return 1 if mismatched else 0


if __name__ == '__main__':
    sys.exit(main())
