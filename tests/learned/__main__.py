"""``python -m tests.learned``: the learned classifier's training data (:mod:`tests.learned`)."""

from tests.learned.cli import main

main()
