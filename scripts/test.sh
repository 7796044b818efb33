#!/usr/bin/env bash
# Set up everything the tests need, then run them: the README's test command and CI's.
# Installs the package with its test extras into the active Python environment (use a virtual
# environment), then runs pytest; extra arguments go to pytest. (.ci/run adds ruff and mypy.)
set -euo pipefail
cd "$(dirname "$0")/.."

python -m pip install --quiet --upgrade pip
python -m pip install --quiet -e ".[test]"

python -m pytest "$@"
