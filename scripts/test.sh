#!/usr/bin/env bash
# Set up everything the tests need, then run them: the README's test command and CI's.
# Installs the real tools the tests run (compilers, git, make, node, Go, TypeScript, Maven's
# offline plugins, Chromium and chromedriver for the HTML report and dashboard tests, axe-core)
# when they are missing, the session lab's pinned agent CLIs into the user's cache directory,
# starts a throwaway PostgreSQL server for the store tests (scripts/pg-throwaway.sh; stopped on
# exit), installs the package with its test extras (at the versions constraints/test.txt locks)
# into the active Python environment (use a virtual environment), then runs pytest on every core
# (pytest-xdist, at most four workers; FAILCODE_TEST_WORKERS=N to choose); extra arguments go to
# pytest. (.ci/run adds ruff and mypy.)
set -euo pipefail
cd "$(dirname "$0")/.."

# -- system tools (Debian/Ubuntu as root; elsewhere the missing ones are reported) ----------
# program -> Debian package; apt-get runs once, and only when something is missing.
declare -A packages=(
  [gcc]=gcc [g++]=g++ [make]=make [git]=git [javac]=default-jdk-headless [node]=nodejs
  [npm]=npm [rustc]=rustc [cargo]=cargo [clang]=clang [mvn]=maven [chromium]=chromium
  [/usr/bin/python3]=python3 [go]=golang-go [curl]=curl [chromedriver]=chromium-driver
)
missing=()
for program in "${!packages[@]}"; do
  command -v "$program" >/dev/null 2>&1 || missing+=("${packages[$program]}")
done
# Maven builds offline from Debian's packaged plugins (its settings-debian.xml points there)
[ -f /etc/maven/settings-debian.xml ] \
  || missing+=(maven-debian-helper libmaven-compiler-plugin-java libmaven-resources-plugin-java)
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test.sh: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "test.sh: missing tools (${missing[*]}); their tests skip, or fail when CI=true" >&2
  fi
fi

# -- TypeScript and axe-core (the dashboard's accessibility checks) into a repo-local,
# git-ignored folder (tests look there, then on PATH). One npm command for both: a --no-save
# install prunes every package it was not asked for, so installing one alone removes the other.
if { [ ! -x .cache/npm/node_modules/.bin/tsc ] \
     || [ ! -f .cache/npm/node_modules/axe-core/axe.min.js ]; } && command -v npm >/dev/null 2>&1
then
  npm install --prefix .cache/npm --silent --no-audit --no-fund --no-save typescript@5 \
    axe-core@4 >/dev/null
fi

# -- a throwaway PostgreSQL server for the store tests (stopped when this script exits) -------
# shellcheck source=scripts/pg-throwaway.sh
source scripts/pg-throwaway.sh

python -m pip install --quiet --upgrade pip
# the versions the suite last ran green with (constraints/test.txt; scripts/deps-drift.sh says
# what newer releases would change)
python -m pip install --quiet -c constraints/test.txt -e ".[test]"

# -- the session lab's agents at their pinned versions (tests/lab/pins.toml), into the user's
# cache directory (~/.cache/failcode/lab, a few GB; reused by later runs): the live subset runs
# one scenario through each. An agent that cannot be installed is named; under CI=true that
# fails the run.
python -m tests.lab install

# on every core, at most four workers (FAILCODE_TEST_WORKERS=1 runs in this one process); a
# module's tests stay on one worker, so its services and browsers start once
workers="${FAILCODE_TEST_WORKERS:-$(python -c 'import os
cores = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else range(os.cpu_count() or 1)
print(min(4, len(cores)))')}"
if [ "$workers" -gt 1 ]; then
  python -m pytest -n "$workers" --dist loadscope "$@"
else
  python -m pytest "$@"
fi
