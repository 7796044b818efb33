"""``python -m failcode`` runs the command line."""

from failcode._entry import main

main()
