"""The session lab: real agent CLIs driven by a scripted model on 127.0.0.1.

- :mod:`tests.lab.scenario`: scenario files (the script and its ground truth);
- :mod:`tests.lab.stub`: the scripted model server;
- :mod:`tests.lab.agents`: the agents it drives (pinned in pins.toml; installs, how to drive each);
- :mod:`tests.lab.runner`: one run, its session files normalized into fixtures;
- :mod:`tests.lab.score`: triage of every fixture against the ground truth;
- :mod:`tests.lab.cli`: ``python -m tests.lab install|run|pin|score|report``.
"""
