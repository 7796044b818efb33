#!/usr/bin/env bash
# What newer releases of the test dependencies would change. scripts/test.sh installs the test
# extra under constraints/test.txt (the versions the suite last ran green with); this resolves
# the same extra without the constraints in a throwaway environment (pip's --dry-run report:
# nothing is installed) and names every package whose newest allowed release differs from its
# locked version, and every one that would be new. Exit 1 when something drifted, 0 when not.
#
#   bash scripts/deps-drift.sh            # what drifted
#   bash scripts/deps-drift.sh --update   # lock the active environment's versions (after a
#                                         # green `bash scripts/test.sh` in it)
set -euo pipefail
cd "$(dirname "$0")/.."
lock=constraints/test.txt

if [ "${1:-}" = "--update" ]; then
  header="$(grep '^#' "$lock")"
  { printf '%s\n' "$header"; python -m pip freeze --exclude-editable | grep -v '^failcode=='; } \
    > "$lock.new"
  mv "$lock.new" "$lock"
  echo "deps-drift: $lock now holds $(grep -c '==' "$lock") versions of this environment"
  exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --upgrade pip
"$work/venv/bin/python" -m pip install --quiet --dry-run --ignore-installed \
  --report "$work/report.json" -e ".[test]"
python3 - "$work/report.json" "$lock" <<'PY'
import json
import re
import sys

report, lock = sys.argv[1], sys.argv[2]
newest = {item["metadata"]["name"].lower().replace("_", "-"): item["metadata"]["version"]
          for item in json.load(open(report))["install"]}
locked = {}
for line in open(lock):
    found = re.match(r"([A-Za-z0-9_.-]+)==(\S+)", line)
    if found:
        locked[found.group(1).lower().replace("_", "-")] = found.group(2)
drift = [(name, locked.get(name), version) for name, version in sorted(newest.items())
         if name != "failcode" and locked.get(name) != version]
for name, old, new in drift:
    print(f"{name}: {'not locked' if old is None else 'locked ' + old} -> newest {new}")
print(f"deps-drift: {len(drift)} of {len(newest) - 1} packages differ from {lock}")
sys.exit(1 if drift else 0)
PY
