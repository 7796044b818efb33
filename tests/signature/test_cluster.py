"""TemplateClusterer: online template clusters that survive a save and reload."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from failcode import ClusterMatch, ClusterStateError, TemplateClusterer
from tests._needs import missing
from tests._paths import SHARED

if TYPE_CHECKING:
    from pathlib import Path

LOGHUB = SHARED / "data" / "loghub2k"


def loghub_dir() -> Path:
    """The Loghub-2k sample, or a skip (a failure on CI, where it must be present)."""
    if not (LOGHUB / "formats.json").exists():
        missing("Loghub-2k data not present")
    return LOGHUB


def test_first_message_opens_a_cluster() -> None:
    """The first message opens a new cluster whose template is the normalized message."""
    m = TemplateClusterer().add("worker 12 exited")
    assert m.is_new
    assert m.changed
    assert m.template == "worker <int> exited"


def test_repeat_joins_the_same_cluster_unchanged() -> None:
    """An exact repeat joins the same cluster and changes nothing."""
    c = TemplateClusterer()
    first = c.add("disk full on /dev/sda1")
    again = c.add("disk full on /dev/sda1")
    assert again == ClusterMatch(first.cluster_id, first.template, is_new=False, changed=False)


def test_volatile_values_join_without_changing_the_template() -> None:
    """Messages that normalize alike share a cluster and its template stays put."""
    c = TemplateClusterer()
    a = c.add("timeout after 30s talking to 10.0.0.1:443")
    b = c.add("timeout after 5s talking to 10.9.8.7:8443")
    assert b.cluster_id == a.cluster_id
    assert not b.changed


@pytest.mark.parametrize(
    ("first", "second", "template"),
    [
        ("Invalid user chen from 1.2.3.4", "Invalid user support from 5.6.7.8",
         "Invalid user <*> from <ip>"),
        ("session closed for user cyrus", "session closed for user news",
         "session closed for user <*>"),
        ("auth failure; rhost=zummit.com user=root",
         "auth failure; rhost=troi.example.org user=root",
         "auth failure; <*> user=root"),
    ],
)  # fmt: skip
def test_word_values_join_one_cluster(first: str, second: str, template: str) -> None:
    """A user or host name that differs is a value: one cluster, the word becomes <*>."""
    c = TemplateClusterer()
    a = c.add(first)
    b = c.add(second)
    assert b.cluster_id == a.cluster_id
    assert b.changed
    assert b.template == template


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("[instance: 1] VM Started (Lifecycle Event)",
         "[instance: 2] VM Stopped (Lifecycle Event)"),
        ('1.2.3.4 "GET /v2/x HTTP/1.1" status: 200', '1.2.3.4 "POST /v2/x HTTP/1.1" status: 200'),
        ("BIOS-e820: 0x0 - 0x9f (usable)", "BIOS-e820: 0x0 - 0x9f (reserved)"),
        ("connection open through proxy HTTPS", "connection open through proxy SOCKS"),
    ],
)  # fmt: skip
def test_different_constant_words_stay_apart(first: str, second: str) -> None:
    """Two different plain words in one position are two events."""
    c = TemplateClusterer()
    assert c.add(first).cluster_id != c.add(second).cluster_id


@pytest.mark.parametrize(
    "message",
    [
        "login ok password=hunter2xyz for admin",
        "calling api with Authorization: Bearer abcdefghijklmnopqrstuvwx now",
        "token ghp_abcdefghijklmnopqrstuvwxyzABCDEF0123 rejected",
    ],
)
def test_a_secret_never_reaches_a_template_or_the_state(message: str) -> None:
    """A new cluster's template and the saved state hold no secret from its first message."""
    c = TemplateClusterer()
    template = c.add(message).template
    state = c.to_json().decode()
    for word in ("hunter2xyz", "abcdefghijklmnopqrstuvwx", "ghp_abcdefghijklmnop"):
        assert word not in template
        assert word not in state


def test_different_token_counts_stay_apart() -> None:
    """Messages of different lengths never share a cluster."""
    c = TemplateClusterer()
    assert c.add("cache miss for key").cluster_id != c.add("cache miss for key now").cluster_id


def test_repeated_token_runs_count_once() -> None:
    """A list of ids of any length is one template."""
    c = TemplateClusterer()
    a = c.add("delete blk_1 blk_2")
    b = c.add("delete blk_3 blk_4 blk_5 blk_6")
    assert a.cluster_id == b.cluster_id


def test_match_does_not_update() -> None:
    """match() finds the cluster without changing its template or size."""
    c = TemplateClusterer()
    c.add("session closed for user cyrus")
    before = c.to_json()
    m = c.match("session closed for user news")
    assert m is not None
    assert m.template == "session closed for user cyrus"
    assert c.to_json() == before


def test_match_returns_none_for_an_unseen_shape() -> None:
    """match() returns None where add() would open a cluster."""
    c = TemplateClusterer()
    c.add("session closed for user cyrus")
    assert c.match("something else entirely happened here today") is None
    assert len(c) == 1


def test_clusters_lists_sizes_and_templates() -> None:
    """clusters() yields one snapshot per cluster with its size, oldest first."""
    c = TemplateClusterer()
    for u in ("a", "b", "c"):
        c.add(f"session closed for user {u}")
    c.add("disk full")
    snap = list(c.clusters())
    assert [(s.template, s.size) for s in snap] == [
        ("session closed for user <*>", 3),
        ("disk full", 1),
    ]


# --- persistence -----------------------------------------------------------------------------


def test_state_round_trips_with_the_same_ids() -> None:
    """A reloaded clusterer has the same clusters and sends new messages to the same ids."""
    c = TemplateClusterer()
    a = c.add("session closed for user cyrus")
    b = c.add("disk full on /dev/sda1")
    r = TemplateClusterer.from_json(c.to_json())
    assert list(r.clusters()) == list(c.clusters())
    assert r.add("session closed for user news").cluster_id == a.cluster_id
    assert r.add("disk full on /dev/sda1").cluster_id == b.cluster_id


def test_cluster_ids_do_not_depend_on_the_hash_seed() -> None:
    """Ids are the same in processes with different PYTHONHASHSEED."""
    code = (
        "from failcode.signature._cluster import TemplateClusterer as T\n"
        "c = T()\n"
        "print([c.add(m).cluster_id for m in ['a b 1', 'user x gone', 'user y gone', 'z']])"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(outs) == 1
    assert re.fullmatch(r"\[('t[0-9a-f]{12}'(, )?)+\]\n", outs.pop())


def _state(**over: object) -> bytes:
    base: dict[str, object] = {
        "version": 2,
        "masking_version": "m1",
        "similarity": 0.6,
        "clusters": [{"id": "t1", "tokens": ["a", "<*>"], "size": 2}],
    }
    base.update(over)
    return json.dumps(base).encode()


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"{",
        b"[]",
        b"null",
        _state(version=1),
        _state(version=3),
        _state(version="1"),
        _state(clusters=[{"id": "t1", "tokens": [], "size": 1}]),
        _state(clusters=[{"id": "t1", "tokens": ["a"], "size": 0}]),
        _state(clusters=[{"id": "", "tokens": ["a"], "size": 1}]),
        _state(clusters=[{"id": "t1", "tokens": ["a b"], "size": 1}]),
        _state(clusters=[{"id": "t1", "tokens": [""], "size": 1}]),
        _state(clusters=[{"id": "t1", "tokens": ["a"], "size": 1}] * 2),
        _state(clusters=[{"id": "t1", "tokens": ["a"]}]),
        _state(extra=True),
    ],
)
def test_malformed_state_raises_a_value_error(data: bytes) -> None:
    """A malformed or unknown-version state raises ClusterStateError, a ValueError."""
    with pytest.raises(ClusterStateError):
        TemplateClusterer.from_json(data)
    assert issubclass(ClusterStateError, ValueError)


def test_well_formed_state_loads() -> None:
    """The reference state used above loads (so the malformed cases differ only as named)."""
    c = TemplateClusterer.from_json(_state())
    assert [(s.cluster_id, s.template, s.size) for s in c.clusters()] == [("t1", "a <*>", 2)]


@given(st.lists(st.text(max_size=80), max_size=30))
def test_add_never_raises_and_state_round_trips(messages: list[str]) -> None:
    """Any messages cluster, and the saved state reloads to the same clusters."""
    c = TemplateClusterer()
    for m in messages:
        assert c.add(m).cluster_id
    assert list(TemplateClusterer.from_json(c.to_json()).clusters()) == list(c.clusters())


# --- on real logs --------------------------------------------------------------------------


def _content_lines(data: Path, system: str) -> tuple[list[str], list[str]]:
    with (data / system / f"{system}_2k.log_structured.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return [r["Content"] for r in rows], [r["EventId"] for r in rows]


def _grouping_accuracy(predicted: list[str], truth: list[str]) -> float:
    true_size = Counter(truth)
    members: dict[str, list[str]] = defaultdict(list)
    for p, t in zip(predicted, truth, strict=True):
        members[p].append(t)
    ok = sum(
        len(ev) for ev in members.values() if len(set(ev)) == 1 and len(ev) == true_size[ev[0]]
    )
    return ok / len(truth)


def test_grouping_accuracy_on_loghub_content() -> None:
    """Averaged over the 16 Loghub-2k systems, grouping accuracy on content is >= 0.90
    (a regression guard; bench/bench_loghub.py prints the full table)."""
    data = loghub_dir()
    systems = sorted(p.name for p in data.iterdir() if p.is_dir())
    assert len(systems) == 16
    scores = []
    for s in systems:
        lines, truth = _content_lines(data, s)
        c = TemplateClusterer()
        scores.append(_grouping_accuracy([c.add(x).cluster_id for x in lines], truth))
    assert sum(scores) / len(scores) >= 0.90
