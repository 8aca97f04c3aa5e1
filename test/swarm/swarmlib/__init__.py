"""Modules of swarm.py (see test/swarm/README.md)."""
