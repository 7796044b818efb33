"""``python -m failcode`` runs the command line."""

from failcode.cli._main import main

main()
