"""The blind sample of the second corpus, and triage's agreement with its labels.

The sample (``python -m tests.triage._blind sample``) is drawn from
``../shared/data/agent-sessions-2/`` by a fixed rule, with counts taken from the raw files
(never from triage): per format, its files in an order shuffled with seed 32, taken until the
format's steps reach its target (aider: its sessions, shuffled the same way, taken the same
way). Labellers who have not written triage's rules label it by docs/triage.md's "Labelling
protocol" into ``tests/fixtures/blind_labels/`` (one file each); ``python -m
tests.triage._blind`` prints triage's agreement with them per format and per check (failing
step found, kind, outcome, loop, ending).
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any, Final

from tests._paths import TESTS
from tests.triage._data import SESSIONS_2

__all__ = ["BLIND_LABELS", "SAMPLE", "TARGETS", "agreement", "draw", "load_labels", "raw_steps"]

SAMPLE: Final = TESTS / "fixtures" / "blind_sample.json"
BLIND_LABELS: Final = TESTS / "fixtures" / "blind_labels"
"""One JSON file per labeller: ``{"about": ..., "labeller": ..., "files": {path: {session:
label}}}``."""
SEED: Final = 32
TARGETS: Final = {
    "aider": 80, "claude-code": 80, "claude-stream-json": 60, "cline": 60, "codex": 70,
    "copilot-cli": 60, "gemini-cli": 0, "harbor-atif": 50, "qwen-code": 60,
}  # fmt: skip
"""Steps wanted per format (gemini-cli's chats in the corpus hold no tool call: all of its
files are taken, for their endings)."""

_AIDER_SESSION: Final = re.compile(r"^# aider chat started at (.+)$", re.MULTILINE)


def raw_steps(path: Path, fmt: str) -> int:
    """Steps in a raw file, counted from its text by the protocol's table (not by triage)."""
    text = path.read_text(errors="replace")
    if fmt in ("claude-code", "claude-stream-json"):
        return len(re.findall(r'"type": ?"tool_result"', text))
    if fmt == "codex":
        return len(re.findall(r'"type": ?"(?:function_call|custom_tool_call|local_shell_call)"',
                              text))
    if fmt == "copilot-cli":
        return text.count('"tool.execution_start"')
    if fmt in ("gemini-cli", "qwen-code"):
        return text.count('"functionCall"')
    if fmt == "harbor-atif":
        return text.count('"tool_call_id"')
    if fmt == "cline":
        return len(re.findall(r'"(?:say|ask)": ?"(?:command|tool)"', text))
    if fmt == "aider":
        return _aider_inputs(text)
    return 0


def _aider_inputs(text: str) -> int:
    count, previous = 0, False
    for line in text.splitlines():
        current = line.startswith("#### ")
        count += current and not previous
        previous = current
    return count


def _files(root: Path) -> dict[str, list[Path]]:
    found: dict[str, list[Path]] = defaultdict(list)
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.name == "SOURCES.md":
            continue
        fmt = path.relative_to(root).parts[0]
        if fmt == "terminal-bench-1" or (fmt == "harbor-atif" and path.name != "trajectory.json"):
            continue
        found[fmt].append(path)
    return found


def draw(root: Path = SESSIONS_2) -> dict[str, Any]:
    """The sample: per format, the files (and for aider the sessions) with their raw steps."""
    sample: dict[str, Any] = {}
    for fmt, paths in sorted(_files(root).items()):
        target = TARGETS.get(fmt)
        if target is None:
            continue
        order = list(paths)
        random.Random(SEED).shuffle(order)
        chosen: list[dict[str, Any]] = []
        total = 0
        if fmt == "aider":
            sessions = []
            for path in paths:
                text = path.read_text(errors="replace")
                heads = list(_AIDER_SESSION.finditer(text))
                for index, head in enumerate(heads):
                    end = heads[index + 1].start() if index + 1 < len(heads) else len(text)
                    sessions.append((path, head.group(1).strip(),
                                     _aider_inputs(text[head.start():end])))
            random.Random(SEED).shuffle(sessions)
            for path, name, steps in sessions:
                if total >= target:
                    break
                if steps == 0:
                    continue
                chosen.append({"path": str(path.relative_to(root)), "session": name,
                               "steps": steps})
                total += steps
        else:
            for path in order:
                if total >= target and target:
                    break
                steps = raw_steps(path, fmt)
                chosen.append({"path": str(path.relative_to(root)), "steps": steps})
                total += steps
        sample[fmt] = {"steps": total, "files": chosen}
    return {"about": __doc__.strip().splitlines()[0], "seed": SEED, "formats": sample}


def agreement(labels: dict[str, Any], root: Path = SESSIONS_2,
              notes: list[str] | None = None) -> dict[str, dict[str, list[int]]]:
    """Per format, per check: ``[agreed, checked]`` between triage and the labels (each
    disagreement appended to ``notes``)."""
    from failcode.triage import triage

    result = triage([root / path for path in labels])
    by_file: dict[str, list[Any]] = defaultdict(list)
    for session in result.sessions:
        by_file[str(Path(session.path).relative_to(root))].append(session)
    table: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for path, by_session in labels.items():
        fmt = path.split("/")[0]
        sessions = {s.session: s for s in by_file.get(path, [])}
        for name, label in by_session.items():
            found = sessions.get(name)
            if found is None and len(sessions) == 1 and len(by_session) == 1:
                found = next(iter(sessions.values()))
            _score(table[fmt], found, label, notes, f"{path} [{name}]")
    return table


def load_labels(folder: Path = BLIND_LABELS) -> dict[str, Any]:
    """Every labeller's labels, per file and session (a file labelled twice: the last)."""
    merged: dict[str, Any] = {}
    for path in sorted(folder.glob("*.json")):
        for name, sessions in json.loads(path.read_text())["files"].items():
            merged.setdefault(name, {}).update(sessions)
    return merged


def _score(row: dict[str, list[int]], session: Any, label: dict[str, Any],
           notes: list[str] | None = None, where: str = "") -> None:
    """Add one session's checks to ``row`` (and each disagreement to ``notes``): per labelled
    step, whether it fails; per step both call failing, its kind; per step either calls an
    outcome, which; per loop either finds, whether the other does too; the ending."""
    # a failure of no step (a model request's, a harness's) is the session's: the ending
    failures = {e.step: e for e in session.failures if e.step is not None} if session else {}
    outcomes = {e.step: type(e.outcome).__struct_config__.tag  # no_match, cancelled...
                for e in session.outcomes if e.step is not None} if session else {}
    labelled = {int(step): kind for step, kind in label.get("failures", {}).items()}
    said: dict[int, str] = {}
    for kind, key in (("no_match", "probes"), ("rejected_action", "rejected"),
                      ("cancelled", "cancelled")):
        said.update((int(step), kind) for step in label.get(key, []))
    steps = int(label.get("steps") or 0)
    notes = notes if notes is not None else []

    def check(name: str, agreed: bool, why: str) -> None:
        row[name][1] += 1
        row[name][0] += agreed
        if not agreed:
            notes.append(f"{where}: {name}: {why}")

    for step in sorted(set(range(steps)) | set(labelled) | set(failures)):
        check("failing step", (step in labelled) == (step in failures),
              f"step {step} labelled {labelled.get(step, said.get(step, 'quiet'))}, triage "
              f"{failures[step].failure.kind if step in failures else outcomes.get(step, 'quiet')}")
        if step in labelled and step in failures:
            kind = str(failures[step].failure.kind)
            check("kind", kind == labelled[step],
                  f"step {step} labelled {labelled[step]}, triage {kind} "
                  f"({failures[step].failure.code})")
        if step in said or (step in outcomes and step not in failures):
            check("outcome", said.get(step) == outcomes.get(step) and step not in failures,
                  f"step {step} labelled {said.get(step, labelled.get(step, 'quiet'))}, triage "
                  f"{outcomes.get(step, 'failure' if step in failures else 'quiet')}")
    loops = {tuple(sorted(loop)) for loop in label.get("loops", [])}
    found_loops = {tuple(sorted(loop.steps)) for loop in session.loops} if session else set()
    for loop in loops:
        found = any(set(loop) <= set(f) or set(f) <= set(loop) for f in found_loops)
        check("loop", found, f"labelled loop {list(loop)}, triage {sorted(found_loops)}")
        row["loops labelled"][1] += 1
        row["loops labelled"][0] += found
    for loop in found_loops:
        if not any(set(loop) & set(lab) for lab in loops):
            check("loop", False, f"triage loop {list(loop)} is not labelled")
            row["false loops"][1] += 1
    check("ending", bool(session) and session.status == label.get("ended"),
          f"labelled {label.get('ended')}, triage {session.status if session else 'no session'}")


def main(argv: list[str]) -> int:
    if argv[:1] == ["sample"]:
        SAMPLE.write_text(json.dumps(draw(), indent=1) + "\n")
        print(f"wrote {SAMPLE}")
        return 0
    labels = load_labels()
    notes: list[str] = []
    table = agreement(labels, notes=notes)
    checks = ["failing step", "kind", "outcome", "loop", "ending"]
    print("| format | " + " | ".join(checks) + " | all |")
    print("|---|" + "---|" * (len(checks) + 1))
    total = [0, 0]
    for fmt, row in sorted(table.items()):
        cells = []
        agreed = checked = 0
        for check in checks:
            a, c = row[check]
            agreed, checked = agreed + a, checked + c
            cells.append(f"{a}/{c}" if c else "-")
        total = [total[0] + agreed, total[1] + checked]
        share = f"{100 * agreed / checked:.1f}%" if checked else "-"
        print(f"| {fmt} | " + " | ".join(cells) + f" | {agreed}/{checked} ({share}) |")
    if total[1]:
        print(f"all: {total[0]}/{total[1]} ({100 * total[0] / total[1]:.1f}%)")
    found, labelled = (sum(row["loops labelled"][i] for row in table.values()) for i in (0, 1))
    false = sum(row["false loops"][1] for row in table.values())
    print(f"loops (by root cause): {labelled} labelled, {found} found, {labelled - found} "
          f"missed, {false} false")
    if "--disagreements" in argv:
        print("\n".join(notes))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
