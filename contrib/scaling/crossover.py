#!/usr/bin/env python3
"""crossover.py - the release radix crossover measured, modelled and simulated.

On N daemons (a namespace swarm with every node's egress limited, or a real
cluster) two DVMs run at once: one releases over the radix-64 routing tree
(grpcomm_low_radix_release false, the PRRTE-like default), the other over
the derived radix-4 release tree. `grove bench release` rounds of each
payload alternate between them (--batch rounds each, the order flipped every
batch), so both see the same machine. Beside the medians it prints, for the
same N, payload and constants:

  model     the seed's closed form T(r) (`grove model`, t = 1)
  sim       `grove sim --nic-sharing fair` with jitter 0 (virtual time): a
            NIC's concurrent copies share its bandwidth, as TCP flows do
  sim fifo  the same with copies serialised on the NIC (the simulator's
            default, which the model-ordering test pins): shown because the
            measured radix-4 spans are what told the two apart

The constants: B from a flat-release fit on the same nodes first
(contrib/scaling/sweep.py's), or from a sweep's JSON (--constants). A flat
release has one level, so that fit pins c (its slope over N) but hardly
alpha (its intercept). So alpha and c are then calibrated on the same nodes:
a third DVM releases over a radix-2 tree (deep: mostly per-hop latency) at
the smallest payload, interleaved with the others, and alpha and c are the
values for which `grove sim` reproduces the flat and the radix-2 spans there.
Radix 4, and every larger payload, are predictions (--no-calibrate keeps the
flat fit's alpha and c).
Frame counts are read from every daemon's engine accounting (`grove status
--json`) before and after each payload's rounds and must equal the
simulator's exactly; a mismatch is printed and ends the run with status 1.

Writes JSON (--json) and, with gnuplot, a PNG (--plot). docs/benchmarks.md
has a run and the command that made it.
"""

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import sweep  # noqa: E402  (Where, start/stop, bench, the fit)

TOPOLOGIES = {
    # name: (DVM parameters, grove sim options)
    'radix64': ({'rml_base_radix': 64, 'grpcomm_low_radix_release': 'false'},
                ['--radix', '64', '--low-radix-release', 'false']),
    'radix4': ({'rml_base_radix': 64, 'rml_base_radix2': 4, 'grpcomm_low_radix_release': 'true'},
               ['--radix', '64', '--radix2', '4', '--low-radix-release', 'true']),
    # Calibration only (the smallest payload): a deep tree, whose span is
    # mostly per-hop latency, beside the flat one, whose span is mostly copies.
    'radix2': ({'rml_base_radix': 64, 'rml_base_radix2': 2, 'grpcomm_low_radix_release': 'true'},
               ['--radix', '64', '--radix2', '2', '--low-radix-release', 'true']),
}
COMPARED = ('radix64', 'radix4')


def release_frames(status):
    """(xcast-data, xcast-ack) frames of bench releases over all daemons' engine accounting."""
    data = ack = 0
    for entry in status['engine_total']:
        if entry['tag'] != 'bench-release':
            continue
        if entry['type'] == 'xcast-data':
            data += entry['frames']
        elif entry['type'] == 'xcast-ack':
            ack += entry['frames']
    return data, ack


def status(where, grove, dvm):
    out = where.run([grove, 'status', '--dvm', dvm, '--json'])
    if out.returncode != 0:
        raise RuntimeError(f'grove status: {out.stderr.strip()}')
    return json.loads(out.stdout)


def simulate(grove, daemons, size, topology, fit, sharing):
    argv = [grove, 'sim', '-n', str(daemons), '--payload', str(size), *TOPOLOGIES[topology][1],
            '--alpha', f"{max(fit['alpha_us'], 0.1):.3f}", '--copy-cost', f"{fit['c_us']:.3f}",
            '-t', '1', '-B', f"{fit['bandwidth_gbit_s']:.6f}", '--jitter', '0',
            '--nic-sharing', sharing, '--json']
    out = subprocess.run(argv, capture_output=True, text=True, check=True)
    result = json.loads(out.stdout)
    data = sum(t['frames'] for t in result['traffic']
               if t['tag'] == 'fence-release' and t['type'] == 'xcast-data')
    ack = sum(t['frames'] for t in result['traffic']
              if t['tag'] == 'fence-release' and t['type'] == 'xcast-ack')
    return {'span_us': result['release_span']['p50_us'], 'frames': [data, ack]}


def calibrate(grove, daemons, size, fit, measured):
    """alpha and c such that `grove sim` (fair NIC, B from the fit) reproduces the measured
    spans of the flat and the radix-2 release at `size`: Newton steps on the simulator itself."""
    names = ('radix64', 'radix2')
    targets = [measured[name] for name in names]

    def spans(alpha, c):
        constants = {'alpha_us': alpha, 'c_us': c, 'bandwidth_gbit_s': fit['bandwidth_gbit_s']}
        return [simulate(grove, daemons, size, name, constants, 'fair')['span_us']
                for name in names]

    alpha, c = max(fit['alpha_us'], 10.0), max(fit['c_us'], 10.0)
    for _ in range(8):
        base = spans(alpha, c)
        residual = [t - b for t, b in zip(targets, base)]
        if max(abs(r) for r in residual) < 1.0:
            break
        d_alpha, d_c = max(alpha * 0.1, 5.0), max(c * 0.1, 2.0)
        by_alpha = [(x - y) / d_alpha for x, y in zip(spans(alpha + d_alpha, c), base)]
        by_c = [(x - y) / d_c for x, y in zip(spans(alpha, c + d_c), base)]
        det = by_alpha[0] * by_c[1] - by_alpha[1] * by_c[0]
        if abs(det) < 1e-9:
            break
        alpha = max(alpha + (residual[0] * by_c[1] - residual[1] * by_c[0]) / det, 0.1)
        c = max(c + (by_alpha[0] * residual[1] - by_alpha[1] * residual[0]) / det, 0.0)
    return {'alpha_us': alpha, 'c_us': c, 'bandwidth_gbit_s': fit['bandwidth_gbit_s'],
            'from': f'{size} B spans of radix 64 and radix 2 (alpha, c); flat fit (B)'}


def model(grove, daemons, size, radix, fit):
    argv = [grove, 'model', '-N', str(daemons), '-M', str(size),
            '--alpha', f"{max(fit['alpha_us'], 0.1):.3f}", '--copy-cost', f"{fit['c_us']:.3f}",
            '-t', '1', '-B', f"{fit['bandwidth_gbit_s']:.6f}", '--compare-radix', str(radix),
            '--json']
    out = subprocess.run(argv, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)['cells'][0]['compare_time_us']


def crossover(sizes, r64, r4):
    """The payload from which radix 4 wins at every larger size, interpolated on log(size)
    between the last size it lost and the next; None if it loses at the largest."""
    if r4[-1] >= r64[-1]:
        return None
    i = len(sizes) - 1
    while i > 0 and r4[i - 1] < r64[i - 1]:
        i -= 1
    if i == 0:
        return sizes[0]  # wins everywhere measured: at or below the smallest payload
    d0, d1 = math.log(r64[i - 1] / r4[i - 1]), math.log(r64[i] / r4[i])
    w = d0 / (d0 - d1)
    return math.exp(math.log(sizes[i - 1]) + w * (math.log(sizes[i]) - math.log(sizes[i - 1])))


def plot(rows, path):
    if shutil.which('gnuplot') is None:
        print('crossover: no gnuplot here, no plot written', file=sys.stderr)
        return False
    data = path + '.dat'
    with open(data, 'w') as f:
        for r in rows:
            f.write(f"{r['size']} {r['measured_us']['radix64']} {r['measured_us']['radix4']} "
                    f"{r['sim_us']['radix64']} {r['sim_us']['radix4']} "
                    f"{r['model_us']['radix64']} {r['model_us']['radix4']} "
                    f"{r['sim_fifo_us']['radix4']}\n")
    script = f'''set terminal pngcairo size 900,560 dashed
set output "{path}"
set xlabel "release payload (bytes)"
set ylabel "release span (us)"
set logscale xy
set key left top
plot "{data}" using 1:2 with linespoints pt 7 lc 1 title "measured, radix 64", \\
     "{data}" using 1:3 with linespoints pt 5 lc 2 title "measured, radix 4", \\
     "{data}" using 1:4 with lines dt 2 lc 1 title "grove sim (fair NIC), radix 64", \\
     "{data}" using 1:5 with lines dt 2 lc 2 title "grove sim (fair NIC), radix 4", \\
     "{data}" using 1:8 with lines dt 4 lc 3 title "grove sim (fifo NIC), radix 4", \\
     "{data}" using 1:6 with lines dt 3 lc 1 title "model T(64)", \\
     "{data}" using 1:7 with lines dt 3 lc 2 title "model T(4)"
'''
    subprocess.run(['gnuplot'], input=script, text=True, check=True)
    os.remove(data)
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0], epilog=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sweep.add_where_arguments(parser)
    parser.add_argument('--sizes', default='33,10KB,100KB,1MB,10MB',
                        help='release payloads (default 33,10KB,100KB,1MB,10MB)')
    parser.add_argument('--repeats', type=int, default=10,
                        help='rounds per payload and topology (median; default 10)')
    parser.add_argument('--batch', type=int, default=5,
                        help='rounds per bench call; calls alternate between the topologies '
                             '(default 5: one round in five meets daemons woken from idle)')
    parser.add_argument('--constants', metavar='JSON',
                        help="a sweep's JSON to take alpha, c, B from (default: fit them here first)")
    parser.add_argument('--fit-counts', default='2,4,8,16',
                        help='daemon counts of the fit (default 2,4,8,16, capped at N)')
    parser.add_argument('--json', default=os.path.join(sweep.TOP, 'benchmarks', 'results',
                                                       'radix-crossover.json'))
    parser.add_argument('--plot', help='PNG path (needs gnuplot)')
    parser.add_argument('--no-calibrate', action='store_true',
                        help="use the flat fit's alpha and c as they are, no radix-2 calibration")
    args = parser.parse_args()
    if args.egress and not args.swarm:
        parser.error('--egress needs --swarm')
    try:
        sizes = sorted({sweep.parse_size(x) for x in args.sizes.split(',')})
        fit_counts = sorted({int(x) for x in args.fit_counts.split(',')})
    except (ValueError, argparse.ArgumentTypeError) as error:
        parser.error(str(error))
    if args.repeats < 1 or args.batch < 1:
        parser.error('--repeats and --batch must be at least 1')
    grove = args.grove or (os.path.join(sweep.TOP, 'build', 'src', 'grove')
                           if args.swarm else 'grove')
    fit = None
    if args.constants:
        with open(args.constants) as f:
            fit = json.load(f)['fit']
        if not fit.get('bandwidth_gbit_s'):
            parser.error(f'{args.constants} has no fitted bandwidth')

    where = sweep.Where(args)
    rows = []
    try:
        daemons = len(where.hosts)
        if fit is None:
            counts = [n for n in fit_counts if n <= daemons]
            if len(counts) < 2:
                raise RuntimeError('the fit needs two daemon counts of at most N')
            fit_results = {n: sweep.measure(where, grove, n, [33, 1000 ** 2], args.repeats)
                           for n in counts}
            fit = sweep.fit_constants(fit_results, counts, 33, 1000 ** 2)
            if not fit['bandwidth_gbit_s']:
                raise RuntimeError('the fit resolved no bandwidth')
        dvms = {}
        measured = {}  # size -> name -> spans
        frames = {}  # size -> name -> [data, ack] per release
        try:
            for name, (params, _) in TOPOLOGIES.items():
                if name == 'radix2' and args.no_calibrate:
                    continue
                dvms[name] = sweep.start_dvm(where, grove, daemons, params, name)
            for size in sizes:
                # The calibration tree runs at the smallest payload only.
                here = {name: dvm for name, dvm in dvms.items()
                        if name in COMPARED or size == sizes[0]}
                spans = {name: [] for name in here}
                before = {name: release_frames(status(where, grove, dvm))
                          for name, dvm in here.items()}
                done, turn = 0, 0
                while done < args.repeats:
                    count = min(args.batch, args.repeats - done)
                    order = list(here) if turn % 2 == 0 else list(reversed(list(here)))
                    for name in order:
                        spans[name] += sweep.bench(where, grove, here[name], size,
                                                   count)['spans_us']
                    done, turn = done + count, turn + 1
                after = {name: release_frames(status(where, grove, dvm))
                         for name, dvm in here.items()}
                measured[size] = spans
                frames[size] = {name: [(a - b) / args.repeats
                                       for a, b in zip(after[name], before[name])]
                                for name in here}
                print(f"{size:>9} B  measured " + '  '.join(
                    f'{name} {statistics.median(v):10.0f} us' for name, v in spans.items()),
                    flush=True)
        finally:
            for dvm in dvms.values():
                sweep.stop_dvm(where, grove, dvm)
    finally:
        where.close()

    small = sizes[0]
    constants = fit
    if not args.no_calibrate:
        constants = calibrate(grove, daemons, small,
                              fit, {name: statistics.median(measured[small][name])
                                    for name in ('radix64', 'radix2')})
        print(f"calibrated at {small} B: alpha = {constants['alpha_us']:.1f} us, "
              f"c = {constants['c_us']:.1f} us (flat fit: alpha {fit['alpha_us']:.1f}, "
              f"c {fit['c_us']:.1f}); B = {constants['bandwidth_gbit_s']:.3f} Gbit/s", flush=True)
    for size in sizes:
        row = {'size': size, 'measured_us': {}, 'spans_us': measured[size],
               'frames': frames[size], 'sim_us': {}, 'sim_fifo_us': {}, 'sim_flat_fit_us': {},
               'sim_frames': {}, 'model_us': {}}
        for name in COMPARED:
            row['measured_us'][name] = statistics.median(measured[size][name])
            simulated = simulate(grove, daemons, size, name, constants, 'fair')
            row['sim_us'][name] = simulated['span_us']
            row['sim_frames'][name] = simulated['frames']
            row['sim_fifo_us'][name] = simulate(grove, daemons, size, name, constants,
                                                'fifo')['span_us']
            row['sim_flat_fit_us'][name] = simulate(grove, daemons, size, name, fit,
                                                    'fair')['span_us']
            row['model_us'][name] = model(grove, daemons, size,
                                          64 if name == 'radix64' else 4, constants)
        rows.append(row)
        m, sim, f = row['measured_us'], row['sim_us'], row['sim_fifo_us']
        print(f"{size:>9} B  measured r64 {m['radix64']:10.0f} r4 {m['radix4']:10.0f} | "
              f"sim r64 {sim['radix64']:10.0f} r4 {sim['radix4']:10.0f} | "
              f"sim fifo r64 {f['radix64']:10.0f} r4 {f['radix4']:10.0f} | "
              f"model r64 {row['model_us']['radix64']:10.0f} "
              f"r4 {row['model_us']['radix4']:10.0f}  (us)", flush=True)

    mismatched = [(r['size'], name) for r in rows for name in COMPARED
                  if r['frames'][name] != r['sim_frames'][name]]
    for r in rows:
        for name in COMPARED:
            r.setdefault('sim_error', {})[name] = r['sim_us'][name] / r['measured_us'][name] - 1
            r.setdefault('sim_fifo_error', {})[name] = (r['sim_fifo_us'][name] /
                                                        r['measured_us'][name] - 1)
            r.setdefault('model_error', {})[name] = r['model_us'][name] / r['measured_us'][name] - 1
    summary = {}
    for kind in ('measured_us', 'sim_us', 'sim_fifo_us', 'model_us'):
        summary[kind] = crossover(sizes, [r[kind]['radix64'] for r in rows],
                                  [r[kind]['radix4'] for r in rows])
    print('crossover (radix 4 wins from here up): ' + ', '.join(
        f"{kind[:-3].replace('_', ' ')} {'%.0f B' % v if v else 'none in range'}"
        for kind, v in summary.items()))
    worst = max(abs(e) for r in rows for e in r['sim_error'].values())
    print(f'simulator (fair) vs measured: worst {worst * 100:.0f}% '
          f"({'within' if worst <= 0.2 else 'outside'} the 20% aim); by payload: " +
          ', '.join(f"{r['size']} B {max(abs(e) for e in r['sim_error'].values()) * 100:.0f}%"
                    for r in rows))
    for size, name in mismatched:
        print(f'frame counts differ at {size} B, {name}: real '
              f"{[r for r in rows if r['size'] == size][0]['frames'][name]}, simulated "
              f"{[r for r in rows if r['size'] == size][0]['sim_frames'][name]}", file=sys.stderr)
    report = {'date': time.strftime('%Y-%m-%d'), 'where': 'swarm' if args.swarm else 'hostfile',
              'egress': args.egress, 'daemons': daemons, 'repeats': args.repeats, 'fit': fit,
              'constants': constants,
              'calibration_spans_us': None if args.no_calibrate else measured[small]['radix2'],
              'rows': rows, 'crossover_bytes': summary, 'sim_worst_error': worst,
              'frames_match': not mismatched}
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, 'w') as f:
        json.dump(report, f, indent=2)
    print(f'written: {args.json}')
    if args.plot and plot(rows, args.plot):
        print(f'written: {args.plot}')
    return 1 if mismatched else 0


if __name__ == '__main__':
    sys.exit(main())
