#!/usr/bin/env python3
"""sweep.py - fit the release cost model's constants from a real DVM.

Runs a flat release (every daemon a child of the controller: release radix
at least N) over growing daemon counts N and two payloads, and fits the
seed's model of a flat release's span:

    T(N, M) = alpha + (N - 1) * (c + M / B)

alpha and c come from the small payload (its line's intercept and slope),
B from how much steeper the large payload's line is. The spans are
`grove bench release` rounds: from the controller starting the broadcast to
the last daemon's acknowledgement (grpcomm's census), payloads random so
deflate cannot shrink them. It then asks `grove model` which release radix
those constants recommend.

Where it runs:
  --swarm N [--egress RATE]   a namespace swarm of N nodes on this machine
                              (contrib/dockerswarm/swarm), each node's egress
                              optionally limited
  --hostfile FILE             a real cluster: this host runs the controller,
                              the hosts are used in file order (ssh as for
                              `grove start --hostfile`)

Writes JSON (--json, default benchmarks/results/cluster-sweep.json) and, if
gnuplot is installed, a PNG plot (--plot). Needs a built grove (--grove,
default build/src/grove; `grove` on PATH with --hostfile).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.realpath(__file__))
TOP = os.path.realpath(os.path.join(HERE, '..', '..'))
SWARM = os.path.join(TOP, 'contrib', 'dockerswarm', 'swarm')


def parse_size(text):
    units = {'': 1, 'B': 1, 'KB': 1000, 'MB': 1000 ** 2, 'KIB': 1024, 'MIB': 1024 ** 2}
    number = text.rstrip('KkMmIiBb')
    unit = text[len(number):].upper()
    if not number.isdigit() or unit not in units:
        raise argparse.ArgumentTypeError(f"bad size '{text}' (examples: 33, 10KB, 1MB)")
    return int(number) * units[unit]


class Where:
    """Runs commands where the controller lives: node0 of a swarm, or here."""

    def __init__(self, args):
        self.args = args
        self.swarm_dir = None
        if args.swarm:
            self.swarm_dir = tempfile.mkdtemp(prefix='grove-sweep-')
            os.chmod(self.swarm_dir, 0o755)
            up = [sys.executable, SWARM, '--dir', self.swarm_dir, 'up', str(args.swarm)]
            if args.egress:
                up += ['--egress', args.egress]
            subprocess.run(up, check=True, capture_output=True, text=True)
            listing = self.swarm('hostfile', '1').stdout
            self.hosts = [line.split()[0] for line in listing.splitlines() if line.strip()]
            self.agent = self.swarm('ssh-agent').stdout.strip()
        else:
            with open(args.hostfile) as f:
                self.hosts = [line.split()[0] for line in f
                              if line.strip() and not line.lstrip().startswith('#')]
            self.agent = None
        self.tmp = self.swarm_dir or tempfile.mkdtemp(prefix='grove-sweep-')

    def swarm(self, *args):
        return subprocess.run([sys.executable, SWARM, '--dir', self.swarm_dir, *args],
                              check=True, capture_output=True, text=True)

    def run(self, argv, timeout=600):
        if self.swarm_dir:
            argv = [sys.executable, SWARM, '--dir', self.swarm_dir, 'exec', 'node0', '--', *argv]
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)

    def close(self):
        if self.swarm_dir:
            subprocess.run([sys.executable, SWARM, '--dir', self.swarm_dir, 'down'],
                           capture_output=True)
        shutil.rmtree(self.tmp, ignore_errors=True)


def start_dvm(where, grove, daemons, params, name):
    """Start a DVM on the first `daemons` hosts with --mca `params`; returns its URI."""
    hostfile = os.path.join(where.tmp, f'hosts-{name}')
    with open(hostfile, 'w') as f:
        for host in where.hosts[:daemons]:
            f.write(f'{host} slots=1\n')
    uri = os.path.join(where.tmp, f'uri-{name}')
    # --another: crossover scripts run several DVMs on the same nodes at once.
    start = [grove, 'start', '--hostfile', hostfile, '--daemonize', '--report-uri', uri, '--another']
    for key, value in params.items():
        start += ['--mca', key, str(value)]
    if where.agent:
        start += ['--mca', 'plm_ssh_agent', where.agent]
    started = where.run(['env', f'TMPDIR={where.tmp}', *start], timeout=300)
    if started.returncode != 0:
        raise RuntimeError(f'grove start on {daemons} hosts: {started.stderr.strip()}')
    return where.run(['cat', uri]).stdout.strip()


def stop_dvm(where, grove, dvm):
    where.run([grove, 'stop', '--dvm', dvm], timeout=120)


def bench(where, grove, dvm, size, count):
    """One `grove bench release` call: its JSON (spans_us, ...)."""
    out = where.run([grove, 'bench', '--dvm', dvm, 'release', '--size', str(size),
                     '--count', str(count), '--json'])
    if out.returncode != 0:
        raise RuntimeError(f'grove bench: {out.stderr.strip()}')
    return json.loads(out.stdout)


def measure(where, grove, daemons, sizes, repeats):
    """Median span (us) of a flat release of each size on the first `daemons` hosts."""
    dvm = start_dvm(where, grove, daemons, {'rml_base_radix2': max(64, daemons),
                                             'grpcomm_low_radix_release': 'true'}, str(daemons))
    out = {}
    try:
        for size in sizes:
            spans = bench(where, grove, dvm, size, repeats)['spans_us']
            out[size] = {'median_us': statistics.median(spans), 'spans_us': spans}
    finally:
        stop_dvm(where, grove, dvm)
    return out


def fit_line(points):
    """Least squares y = a + b x over (x, y) points."""
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    sxx = sum((x - mean_x) ** 2 for x, _ in points)
    if sxx == 0:
        raise RuntimeError('need at least two daemon counts to fit a line')
    b = sum((x - mean_x) * (y - mean_y) for x, y in points) / sxx
    return mean_y - b * mean_x, b


def fit_constants(results, counts, small, large):
    """alpha and c from the small payload's line over N - 1, B from the large one's extra slope."""
    alpha, c = fit_line([(n - 1, results[n][small]['median_us']) for n in counts])
    _, slope_large = fit_line([(n - 1, results[n][large]['median_us']) for n in counts])
    per_byte = (slope_large - c) / (large - small)
    fit = {'alpha_us': alpha, 'c_us': c, 'bytes_per_us': (1 / per_byte) if per_byte > 0 else None}
    gbit = fit['bytes_per_us'] * 8 / 1000 if fit['bytes_per_us'] else None
    fit['bandwidth_gbit_s'] = gbit
    print(f'fit: alpha = {alpha:.1f} us, c = {c:.1f} us per copy, '
          + (f'B = {gbit:.3f} Gbit/s' if gbit else 'B not resolved (the large payload was no steeper)'),
          flush=True)
    return fit


def plot(results, small, large, fit, path):
    if shutil.which('gnuplot') is None:
        print('sweep: no gnuplot here, no plot written', file=sys.stderr)
        return False
    data = path + '.dat'
    with open(data, 'w') as f:
        for n in sorted(results):
            f.write(f"{n} {results[n][small]['median_us']} {results[n][large]['median_us']}\n")
    alpha, c, bandwidth = fit['alpha_us'], fit['c_us'], fit['bytes_per_us']
    script = f'''set terminal png size 800,500
set output "{path}"
set xlabel "daemons N"
set ylabel "flat release span (us)"
set logscale y
set key left top
plot "{data}" using 1:2 with points pt 7 title "measured, {small} B", \\
     "{data}" using 1:3 with points pt 5 title "measured, {large} B", \\
     {alpha} + (x - 1) * {c} title "model, {small} B", \\
     {alpha} + (x - 1) * ({c} + {large} / {bandwidth}) title "model, {large} B"
'''
    subprocess.run(['gnuplot'], input=script, text=True, check=True)
    os.remove(data)
    return True


def add_where_arguments(parser):
    """--swarm N | --hostfile FILE, --egress RATE and --grove, for Where."""
    where_group = parser.add_mutually_exclusive_group(required=True)
    where_group.add_argument('--swarm', type=int, metavar='N', help='a namespace swarm of N nodes')
    where_group.add_argument('--hostfile', help='a real cluster, hosts in file order')
    parser.add_argument('--egress', metavar='RATE', help="with --swarm: every node's egress limit")
    parser.add_argument('--grove', help='the grove binary (default: build tree, or PATH)')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0], epilog=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_where_arguments(parser)
    parser.add_argument('--counts', default='2,4,8,16',
                        help='daemon counts (comma-separated; default 2,4,8,16)')
    parser.add_argument('--sizes', default='33,1MB', help='two payloads: small,large (default 33,1MB)')
    parser.add_argument('--repeats', type=int, default=10, help='rounds per point (median; default 10)')
    parser.add_argument('--json', default=os.path.join(TOP, 'benchmarks', 'results',
                                                       'cluster-sweep.json'))
    parser.add_argument('--plot', help='PNG path (needs gnuplot)')
    args = parser.parse_args()
    if args.egress and not args.swarm:
        parser.error('--egress needs --swarm')
    try:
        counts = sorted({int(x) for x in args.counts.split(',')})
        sizes = [parse_size(x) for x in args.sizes.split(',')]
    except (ValueError, argparse.ArgumentTypeError) as error:
        parser.error(str(error))
    if len(sizes) != 2 or sizes[0] >= sizes[1]:
        parser.error('--sizes takes two payloads, the small one first')
    if len(counts) < 2 or counts[0] < 2:
        parser.error('--counts needs at least two counts of 2 or more')
    if args.repeats < 1:
        parser.error('--repeats must be at least 1')
    grove = args.grove or (os.path.join(TOP, 'build', 'src', 'grove') if args.swarm else 'grove')
    small, large = sizes

    where = Where(args)
    try:
        if counts[-1] > len(where.hosts):
            raise RuntimeError(f'{counts[-1]} daemons asked, {len(where.hosts)} hosts given')
        results = {}
        for n in counts:
            results[n] = measure(where, grove, n, sizes, args.repeats)
            print(f"N={n:5d}  {small} B: {results[n][small]['median_us']:10.1f} us   "
                  f"{large} B: {results[n][large]['median_us']:10.1f} us", flush=True)
    finally:
        where.close()

    fit = fit_constants(results, counts, small, large)
    alpha, c, gbit = fit['alpha_us'], fit['c_us'], fit['bandwidth_gbit_s']
    model = None
    if gbit:
        ask = subprocess.run([grove,
                              'model', '-N', str(counts[-1]), '-M', str(large), '--alpha',
                              f'{max(alpha, 0.1):.3f}', '--copy-cost', f'{max(c, 0.01):.3f}',
                              '-t', '1', '-B', f'{gbit:.6f}', '--json'],
                             capture_output=True, text=True)
        if ask.returncode == 0:
            model = json.loads(ask.stdout)
            cell = model['cells'][0]
            print(f"grove model with these constants (t = 1): at N = {counts[-1]} and {large} B "
                  f"the optimal release radix is {cell['optimal_radix']}, radix "
                  f"{cell['compare_radix']} costs x{cell['compare_over_optimal']:.2f}; "
                  f"the crossover payload is {model['crossover_bytes']:.0f} B")
    report = {'date': time.strftime('%Y-%m-%d'), 'where': 'swarm' if args.swarm else 'hostfile',
              'egress': args.egress, 'counts': counts, 'sizes': sizes, 'repeats': args.repeats,
              'results': {str(n): {str(s): v for s, v in r.items()} for n, r in results.items()},
              'fit': fit, 'model': model}
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, 'w') as f:
        json.dump(report, f, indent=2)
    print(f'written: {args.json}')
    if args.plot and gbit and plot(results, small, large, fit, args.plot):
        print(f'written: {args.plot}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
