"""``python -m tests.lab``: the session lab's command line (see :mod:`tests.lab.cli`)."""

from tests.lab.cli import main

main()
