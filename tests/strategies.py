"""Hypothesis strategies for failcode records, shared by the property tests."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from failcode import (
    Category,
    CauseLink,
    EntityRef,
    Failure,
    Kind,
    Retryability,
    Severity,
)

tokens = st.from_regex(r"[a-z][a-z0-9_.]{0,15}", fullmatch=True)
locations = st.none() | st.from_regex(r"(src|lib|tests)(/[a-z][a-z0-9_]{0,8}){1,3}\.(py|c|rs|ts)",
                                      fullmatch=True)
one_line = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1,
    max_size=300,
).filter(lambda s: s.strip() != "" and s.isprintable())
scalars = (st.none() | st.booleans() | st.integers(-(2**53), 2**53)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=40))
mappings = st.dictionaries(st.text(min_size=1, max_size=12), scalars, max_size=5)
refs = st.builds(EntityRef, st.sampled_from(["artifact", "event", "log"]),
                 st.text(min_size=1, max_size=20))
causes = st.builds(CauseLink, st.from_regex(r"[A-Za-z_][A-Za-z0-9_.]{0,30}", fullmatch=True),
                   st.text(max_size=60), st.none() | st.just("FC-SYS-001"))
codes = st.from_regex(r"[A-Z]{2,4}-[A-Z]{2,5}-[0-9]{3}", fullmatch=True)


@st.composite
def failures(draw: st.DrawFn) -> Failure:
    """Any valid Failure."""
    kind = draw(st.sampled_from(Kind))
    category = draw(st.sampled_from(Category))
    surface = draw(tokens)
    error_class = draw(tokens)
    location = draw(locations)
    digest = draw(st.from_regex(r"[0-9a-f]{8}", fullmatch=True))
    remedy = draw(one_line) if category.needs_remedy else draw(st.none() | one_line)
    fields: dict[str, Any] = {
        "code": draw(codes),
        "kind": kind,
        "category": category,
        "severity": draw(st.sampled_from(Severity)),
        "retryability": draw(st.sampled_from(Retryability)),
        "error_class": error_class,
        "surface": surface,
        "message": draw(one_line),
        "signature": f"{kind.value}:{surface}:{error_class}:{location or 'none'}:{digest}",
        "signature_version": draw(st.sampled_from(["sig1.n1", "v0"])),
        "location": location,
        "params": draw(mappings),
        "detail": draw(st.none() | st.text(min_size=1, max_size=200).filter(str.strip)),
        "cause": tuple(draw(st.lists(causes, max_size=3))),
        "remedy": remedy,
        "recoverable": draw(st.booleans()),
        "context": draw(mappings),
        "cause_refs": tuple(draw(st.lists(refs, max_size=2))),
        "evidence_refs": tuple(draw(st.lists(refs, max_size=2))),
        "metadata": draw(mappings),
    }
    return Failure(**fields)
