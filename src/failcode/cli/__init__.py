"""The ``failcode`` command line: the top layer, which may use every other one.

Each subsystem that brings commands (codes, config, doctor, store, triage, pipeline) registers a
click group or command here; ``import failcode`` never imports this package or click.
"""
from failcode.cli._main import main

__all__ = ["main"]
