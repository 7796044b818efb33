"""Differential tests: the agents' own code, run from the lab's installs, as the oracle."""
