"""Analysis: the events of each session read into failures, outcomes, loops and endings.

``_analyze`` reads an input with its reader and classifies each failing step; ``_masking``
finds failures an exit status hides, ``_provided`` what the session's repository provides,
``_loops`` repeated failures by root cause, ``_compare`` two runs against each other, and
``_run`` spreads many inputs over processes. It may use the readers and the result model,
never the renderers or the CLI.
"""
