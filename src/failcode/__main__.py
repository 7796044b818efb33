"""``python -m failcode`` runs the command line."""

from failcode._cli import main

main()
