"""Grouping Accuracy on Loghub-2k: normalize_message and TemplateClusterer next to Drain3.

One command, run from the repo root::

    python bench/bench_loghub.py [--data ../shared/data/loghub2k] [--truth all]

For each of the 16 Loghub-2k systems it groups the 2,000 lines three ways, in the
same run, and prints Grouping Accuracy (GA) per system and averaged, once on the
content field (the header parsed off with the system's format from ``formats.json``)
and once on whole raw lines (headers and timestamps included):

- ``normalize``: a group is one distinct ``normalize_message`` output;
- ``cluster``: a group is one ``TemplateClusterer`` cluster (one clusterer per system,
  fed in log order, default settings);
- ``drain3``: Drain3 as in the Drain paper (depth 4, similarity threshold 0.4,
  max children 100, numeric tokens parametrized), with no masking; and ``drain3+masks``
  with drain3's example masks (IP, hex, numbers ...), for reference.

GA is the LogPAI definition (Zhu et al., ICSE 2019): a line is correct when the set of
lines in its predicted group equals the set of lines in its true group. The truth is
the ``EventId`` column of, by default all three in one run (``--truth all``), each
printed as its own table:

- ``original``: ``<System>_2k.log_structured.csv`` (logpai/loghub, the files the
  published Drain figures used);
- ``corrected``: ``<System>_2k.log_structured_corrected.csv`` (logpai/logparser's
  loghub_2k_corrected);
- ``loghub2``: ``loghub-2.0/<System>_2k.log_structured_corrected.csv`` (logpai/loghub-2.0's
  corrected 2k sets).

Speed: every candidate processes the content fields of all systems (32,000 lines),
interleaved over ``--rounds`` rounds; the table gives the median lines/s and the
median per-round ratio to each Drain3 variant. Each timed round starts with empty
normalization caches and builds a fresh clusterer / miner per system, so the figure
covers the whole online cost; ``normalize`` includes ``redact`` (about 3.5 us/line).

Where normalize_message falls short (and why; it is not meant to merge these):

- word-valued variables stay by design (DESIGN.md: another user or host name is the
  clusterer's job): user names (Linux, OpenSSH), host names (Linux, OpenSSH, Proxifier,
  whose 954-line event starts with the client host name), request paths (OpenStack),
  ``[Thunderbird_C5]``-style letter values (Thunderbird);
- variable token counts (HDFS ``ask ... to delete blk_1 blk_2 ...``, a path with or without
  ``subdir5``);
- raw lines add per-line header words: BGL node names ``R02-M1-N0`` vs ``R02-M1-NC``,
  Hadoop thread names, Mac/HPC host names.

Where TemplateClusterer falls short: Linux (the truth splits ``user=root`` from
``user=guest`` but merges ``for user cyrus`` with ``for user news``; the clusterer treats
both as values), Proxifier (one event written with 3 to 5 tokens: ``0 bytes sent`` vs
``1,234 bytes (1.2 KB) sent``), OpenSSH (an empty user name collapses a token away).
"""

from __future__ import annotations

import argparse
import csv
import json
import logging
import re
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from _timing import interleaved, median_ratio
from failcode.signature import _cluster
from failcode.signature._cluster import TemplateClusterer
from failcode.signature._normalize import _clear_caches, normalize_message

if TYPE_CHECKING:
    from collections.abc import Callable, Hashable, Sequence

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "loghub2k"
SYSTEMS = (
    "HDFS", "Hadoop", "Spark", "Zookeeper", "BGL", "HPC", "Thunderbird", "Windows",
    "Linux", "Android", "HealthApp", "Apache", "Proxifier", "OpenSSH", "OpenStack", "Mac",
)  # fmt: skip

# drain3's example masking set (its drain3.ini), the generic masks people ship with it.
DRAIN3_EXAMPLE_MASKS = (
    (r"((?<=[^A-Za-z0-9])|^)(([0-9a-f]{2,}:){3,}([0-9a-f]{2,}))((?=[^A-Za-z0-9])|$)", "ID"),
    (r"((?<=[^A-Za-z0-9])|^)(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})((?=[^A-Za-z0-9])|$)", "IP"),
    (r"((?<=[^A-Za-z0-9])|^)([0-9a-f]{6,} ?){3,}((?=[^A-Za-z0-9])|$)", "SEQ"),
    (r"((?<=[^A-Za-z0-9])|^)([0-9A-F]{4} ?){4,}((?=[^A-Za-z0-9])|$)", "SEQ"),
    (r"((?<=[^A-Za-z0-9])|^)(0x[a-f0-9A-F]+)((?=[^A-Za-z0-9])|$)", "HEX"),
    (r"((?<=[^A-Za-z0-9])|^)([\-\+]?\d+)((?=[^A-Za-z0-9])|$)", "NUM"),
    (r"(?<=executed cmd )(\".+?\")", "CMD"),
)


def format_regex(fmt: str) -> re.Pattern[str]:
    """Compile a Loghub header format the way logparser does (anchored, lazy fields)."""
    out = []
    for i, part in enumerate(re.split(r"(<[^<>]+>)", fmt)):
        if i % 2 == 0:
            out.append(re.sub(" +", r"\\s+", part))
        else:
            out.append(f"(?P<{part.strip('<>')}>.*?)")
    return re.compile("^" + "".join(out) + "$")


TRUTHS = ("original", "corrected", "loghub2")


def load_system(data: Path, system: str, truth: str) -> tuple[list[str], list[str], list[str]]:
    """Return (raw lines, content fields, true event ids), aligned by LineId."""
    fmt = format_regex(json.loads((data / "formats.json").read_text())[system])
    suffix = "_structured.csv" if truth == "original" else "_structured_corrected.csv"
    folder = data / system / "loghub-2.0" if truth == "loghub2" else data / system
    log = data / system / f"{system}_2k.log"
    if truth == "corrected" and (data / system / f"{system}_2k_corrected.log").exists():
        log = data / system / f"{system}_2k_corrected.log"
    raw: list[str] = []
    content: list[str] = []
    with log.open(encoding="utf-8", errors="replace", newline="") as fh:
        for line in fh:
            text = line.strip()
            m = fmt.match(text)
            if m:  # logparser drops lines its format does not match, so LineIds skip them
                raw.append(text)
                content.append(m.group("Content"))
    truth_file = folder / f"{system}_2k.log{suffix}"
    if not truth_file.exists():  # loghub-2.0 has no Android and Windows 2k sets
        return raw, content, []
    with truth_file.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    if len(rows) != len(raw):
        raise SystemExit(f"{system}: {len(raw)} parsed lines but {len(rows)} truth rows")
    return raw, content, [r["EventId"] for r in rows]


def grouping_accuracy(predicted: Sequence[Hashable], truth: Sequence[str]) -> float:
    """LogPAI Grouping Accuracy: share of lines whose predicted group is exactly their true one."""
    true_size = Counter(truth)
    members: dict[Hashable, list[str]] = defaultdict(list)
    for p, t in zip(predicted, truth, strict=True):
        members[p].append(t)
    correct = 0
    for events in members.values():
        first = events[0]
        if all(e == first for e in events) and len(events) == true_size[first]:
            correct += len(events)
    return correct / len(truth)


def make_drain3(masks: bool) -> Callable[[], Callable[[str], Hashable]]:
    from drain3 import TemplateMiner
    from drain3.masking import MaskingInstruction
    from drain3.template_miner_config import TemplateMinerConfig

    logging.getLogger("drain3").setLevel(logging.WARNING)

    def factory() -> Callable[[str], Hashable]:
        cfg = TemplateMinerConfig()
        cfg.drain_depth = 4
        cfg.drain_sim_th = 0.4
        cfg.drain_max_children = 100
        cfg.parametrize_numeric_tokens = True
        cfg.profiling_enabled = False
        if masks:
            cfg.masking_instructions = [MaskingInstruction(p, n) for p, n in DRAIN3_EXAMPLE_MASKS]
        miner = TemplateMiner(config=cfg)
        return lambda line: miner.add_log_message(line)["cluster_id"]

    return factory


def make_cluster() -> Callable[[str], Hashable]:
    clusterer = TemplateClusterer()
    return lambda line: clusterer.add(line).cluster_id


def run_online(
    factory: Callable[[], Callable[[str], Hashable]], lines: list[str]
) -> list[Hashable]:
    """Feed lines in order to a fresh grouper and return each line's group id."""
    group = factory()
    return [group(x) for x in lines]


CANDIDATES: dict[str, Callable[[], Callable[[str], Hashable]]] = {
    "normalize": lambda: normalize_message,
    "cluster": make_cluster,
    "drain3": make_drain3(masks=False),
    "drain3+masks": make_drain3(masks=True),
}


def fmt_ga(x: float) -> str:
    return f"{x:.3f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--truth", choices=(*TRUTHS, "all"), default="all")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--show-errors", metavar="SYSTEM", help="print mis-grouped true events")
    a = ap.parse_args()

    truths = TRUTHS if a.truth == "all" else (a.truth,)
    data = {s: load_system(a.data, s, "original") for s in SYSTEMS}
    names = list(CANDIDATES)
    pred: dict[tuple[str, str, str], list[Hashable]] = {}
    for field in ("content", "raw"):
        for s, (raw, content, _) in data.items():
            lines = content if field == "content" else raw
            for n in names:
                pred[field, s, n] = run_online(CANDIDATES[n], lines)

    for truth_name in truths:
        truth_of = {s: load_system(a.data, s, truth_name)[2] for s in SYSTEMS}
        systems = [s for s in SYSTEMS if truth_of[s]]
        ga = {
            (f, s, n): grouping_accuracy(pred[f, s, n], truth_of[s])
            for f in ("content", "raw") for s in systems for n in names
        }
        print(f"Loghub-2k Grouping Accuracy (truth: {truth_name}; {len(systems)} systems)\n")
        header = "| system | " + " | ".join(f"{f} {n}" for f in ("content", "raw") for n in names)
        print(header + " |")
        print("|---" * (1 + 2 * len(names)) + "|")
        for s in systems:
            cells = [fmt_ga(ga[f, s, n]) for f in ("content", "raw") for n in names]
            print(f"| {s} | " + " | ".join(cells) + " |")
        avg = {
            (f, n): statistics.mean(ga[f, s, n] for s in systems)
            for f in ("content", "raw") for n in names
        }
        print("| **average** | "
              + " | ".join(f"**{fmt_ga(avg[f, n])}**" for f in ("content", "raw") for n in names)
              + " |\n")
        if a.show_errors in systems:
            s = a.show_errors
            raw, content, _ = data[s]
            for f, lines in (("content", content), ("raw", raw)):
                for n in ("normalize", "cluster"):
                    show_errors((s, f, n), lines, pred[f, s, n], truth_of[s])

    all_content = [x for _, c, _ in data.values() for x in c]

    def timed(n: str) -> Callable[[], object]:
        def run() -> None:
            _clear_caches()  # every round starts cold, like a fresh process
            _cluster._WORDS.clear()
            for _, c, _ in data.values():
                run_online(CANDIDATES[n], c)

        return run

    times = interleaved({n: timed(n) for n in names}, a.rounds)
    print(f"Speed on the content fields ({len(all_content)} lines, ", end="")
    print(f"median of {a.rounds} interleaved rounds)\n")
    print("| candidate | lines/s | us/line | speed vs drain3 | speed vs drain3+masks |")
    print("|---|---|---|---|---|")
    for n in names:
        med = statistics.median(times[n])
        vs_plain = 1 / median_ratio(times, n, "drain3")
        vs_masks = 1 / median_ratio(times, n, "drain3+masks")
        print(
            f"| {n} | {len(all_content) / med:,.0f} | {med / len(all_content) * 1e6:.2f} | "
            f"{vs_plain:.2f}x | {vs_masks:.2f}x |"
        )


def show_errors(
    where: tuple[str, str, str], lines: list[str], pred: list[Hashable], truth: list[str]
) -> None:
    """Print, per wrongly grouped true event, how the grouper split or merged it."""
    system, field, name = where
    by_true: dict[str, list[int]] = defaultdict(list)
    by_pred: dict[Hashable, list[int]] = defaultdict(list)
    for i, (p, t) in enumerate(zip(pred, truth, strict=True)):
        by_true[t].append(i)
        by_pred[p].append(i)
    print(f"\n### {system} / {field} / {name}: mis-grouped events")
    for t, idx in by_true.items():
        groups = {pred[i] for i in idx}
        if len(groups) == 1 and len(by_pred[pred[idx[0]]]) == len(idx):
            continue
        print(f"- {t} ({len(idx)} lines) -> {len(groups)} predicted groups")
        for g in list(groups)[:4]:
            i = next(i for i in idx if pred[i] == g)
            others = {truth[j] for j in by_pred[g]}
            print(f"    [{len(by_pred[g])} lines, true {sorted(others)[:5]}] {lines[i][:160]!r}")
            if name == "normalize":
                print(f"       -> {normalize_message(lines[i])[:160]!r}")


if __name__ == "__main__":
    main()
