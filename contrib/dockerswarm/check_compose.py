#!/usr/bin/env python3
"""check_compose.py - checks compose.yaml and the Dockerfile without Docker.

Where no Docker engine runs (CI), this is what keeps the Docker backend from
rotting: compose.yaml must parse, define node0..node9 with matching
hostnames, each built from this directory's Dockerfile on one network with
NET_ADMIN (the link faults need it), and node0 must get the hostfile naming
every node; the Dockerfile must start from Debian 12, build grove, make a
key and run sshd. With a Docker engine, `docker compose config` checks it
too. Exit 0 when all holds, else 1 with one line per problem.
"""

import os
import shutil
import subprocess
import sys

import yaml

HERE = os.path.dirname(os.path.realpath(__file__))


def compose_available():
    return shutil.which('docker') is not None and subprocess.run(
        ['docker', 'compose', 'version'], capture_output=True).returncode == 0


def problems():
    out = []
    with open(os.path.join(HERE, 'compose.yaml')) as f:
        compose = yaml.safe_load(f)
    services = compose.get('services') or {}
    expected = [f'node{k}' for k in range(10)]
    if sorted(services) != sorted(expected):
        out.append(f'services are {sorted(services)}, expected node0..node9')
    networks = set((compose.get('networks') or {}).keys())
    for name, service in services.items():
        if service.get('hostname') != name:
            out.append(f'{name}: hostname {service.get("hostname")!r}')
        build = service.get('build') or {}
        context = os.path.normpath(os.path.join(HERE, build.get('context', '.')))
        dockerfile = os.path.join(context, build.get('dockerfile', 'Dockerfile'))
        if os.path.realpath(dockerfile) != os.path.join(HERE, 'Dockerfile'):
            out.append(f'{name}: builds {dockerfile}, not {HERE}/Dockerfile')
        if 'NET_ADMIN' not in (service.get('cap_add') or []):
            out.append(f'{name}: no NET_ADMIN (tc and ip link need it)')
        if not set(service.get('networks') or []) <= networks or not service.get('networks'):
            out.append(f'{name}: networks {service.get("networks")} not all defined')
    configs = compose.get('configs') or {}
    hostfile = (configs.get('hostfile') or {}).get('content', '')
    if [line.split()[0] for line in hostfile.splitlines() if line.strip()] != expected:
        out.append('the hostfile config does not name node0..node9 in order')
    sources = [c.get('source') for c in (services.get('node0') or {}).get('configs') or []]
    if 'hostfile' not in sources:
        out.append('node0 does not get the hostfile')

    with open(os.path.join(HERE, 'Dockerfile')) as f:
        dockerfile = f.read()
    for needle, why in (('FROM debian:12', 'the base image'),
                        ('meson setup', 'building grove'),
                        ('ssh-keygen', 'the node key'),
                        ('/usr/sbin/sshd', 'sshd as the command'),
                        ('pmix_fence_client', 'the scenario client')):
        if needle not in dockerfile:
            out.append(f'Dockerfile: no "{needle}" ({why})')

    if compose_available():
        result = subprocess.run(['docker', 'compose', '-f', os.path.join(HERE, 'compose.yaml'),
                                 'config', '-q'], capture_output=True, text=True)
        if result.returncode != 0:
            out.append(f'docker compose config: {result.stderr.strip()}')
    return out


if __name__ == '__main__':
    found = problems()
    for problem in found:
        print(f'check_compose: {problem}')
    if not found:
        print('check_compose: compose.yaml and Dockerfile ok'
              + ('' if compose_available() else ' (no docker compose here: its own check not run)'))
    sys.exit(1 if found else 0)
