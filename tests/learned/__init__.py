"""Training data for the learned failure classifier: real tools, truth by construction.

The rules know the tools whose output they have seen; the learned classifier (issue 39) is to
suggest a kind and a class for the others. It learns from examples that this package makes by
running real programs on inputs built to pass or to fail in a known way, so every label is
true by construction, not by anyone's reading of the output.

Cases are data: one TOML file per ecosystem in ``tests/learned/cases/`` (its name is the
ecosystem: ``python``, ``javascript``, ``go``, ``rust``, ``java``, ``c``, ``shell``, ``git``,
``packages``); adding a case is adding a table. A file has an ``about`` line and
``[[case]]`` tables with these fields:

- ``id``: unique across the files; ``about``: one line, optional.
- ``program``: the executable the example is about (the one whose output it is): counted in
  the summary, and the unit a held-out split is made by. ``tools``: other programs it needs
  (``timeout``, a compiler a make recipe runs); a case whose programs are not installed is
  reported and not run.
- ``files``: a table of project files (path -> text) written before the command, and
  ``setup``: a bash script (``bash -e``) run in the project after that (a git history, a
  file without its execute bit). A failing setup leaves the example out.
- ``command``: run with ``bash -c`` in the project.
- ``exit``: the command's true exit status (negative: killed by that signal, as Python
  reports it: ``bash -c 'cc x.c && ./a.out'`` runs the last program in bash's place, so a
  crash is -11, not 139); ``kind`` and ``class``: the truth, from failcode's
  taxonomy (its kinds; the classes of its catalog and of docs/classification.md), or
  ``"none"`` and ``"none"`` for an example that is no failure (a pass, and also a probe or a
  comparison that answers no: ``grep`` finding nothing, ``diff`` of files that differ). A case
  exiting 0 has kind ``"none"``.
- ``says``: a regular expression the output must match (placeholders filled), for a case
  whose exit status alone could come from another failure (``python -m x`` exits 1 both when
  x is missing and when x is a package without ``__main__``).
- ``timeout``: seconds the example may take (60 unless set); past it the example is left out.
- ``params``: lists of values, each named by a ``@name@`` placeholder in ``command``,
  ``setup``, a file's path or text. The case yields one example per combination (their
  product), so one case gives many distinct examples; every parameter must be used, and every
  placeholder have values.

Each example runs in a fresh temporary project in the environment of the lab's scenario
commands (:func:`tests.lab.agents.tool_env`: the repository's Python and TypeScript first,
offline pip, npm, Go and Cargo, a private HOME and TMPDIR), plus Go's build cache shared
between examples and pytest without the plugins of the repository's environment
(:func:`tests.learned.generate.learned_env`). An example whose command does not exit as stated,
or whose output does not match its ``says``, is reported and left out: a wrong label is never
written.

``python -m tests.learned generate [--out DIR] [--only ECOSYSTEM] [--jobs N] [--force]`` writes
one JSON line per example to ``examples-<hash of the case files>.jsonl`` in the cache folder
(``FAILCODE_LEARNED_CACHE``, else ``~/.cache/failcode/learned``; a run with unchanged cases
reuses it) with ``id`` (the case id and a hash of its parameters: stable), ``case``,
``ecosystem``, ``program``, ``command``, ``argv``, ``params``, ``exit``, ``stdout`` and
``stderr`` (the last 16 KiB of each; ``stdout_truncated``, ``stderr_truncated``), ``kind``,
``class`` and ``seconds``, and beside it ``.left-out.json``, the examples left out and why. It
prints the examples per program, kind, class and ecosystem. ``python -m tests.learned count``
says what the files would yield without running anything.

- :mod:`tests.learned.catalogue`: loading and checking the case files, expanding examples;
- :mod:`tests.learned.generate`: running them, the JSON lines, the summary;
- :mod:`tests.learned.train`: ``python -m tests.learned train``, the model the package ships
  (``failcode/learned/data/model.json.gz``), trained on every failing example;
- :mod:`tests.learned.evaluate`: ``python -m tests.learned evaluate``, the model measured on
  programs held out of training;
- :mod:`tests.learned.cli`: ``python -m tests.learned generate|count|train|evaluate``.
"""
