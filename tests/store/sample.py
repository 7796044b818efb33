"""Events for the store tests: real failures built through FC codes, at chosen times."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from failcode import FC, Failure
from failcode.events import Event, failure_event

T0 = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)

SURFACES = ("shell.run", "shell.exec", "ci.step")
PROGRAMS = ("cargo", "node", "gcc", "make")


def failure(surface: str = "shell.run", program: str = "cargo", *,
            session: str | None = None, input: str | None = None) -> Failure:  # noqa: A002
    """A command-not-found failure; surface and program decide the signature. ``input``: the
    path triage would have read it from (``triage.path``, the store's input of its session)."""
    context: dict[str, str] = {"session": session} if session else {}
    if input is not None:
        context["triage.path"] = input
    return FC.CMD_NOT_FOUND.failure(surface=surface, params={"program": program},
                                    location=f"bin/{program}", context=context or None)


def event(surface: str = "shell.run", program: str = "cargo", *, session: str | None = "s-1",
          minute: float = 0.0, name: str = "tool.failed",
          input: str | None = None) -> Event:  # noqa: A002 - the store's word
    """A failure event ``minute`` minutes after T0 (of ``input``: see :func:`failure`)."""
    return failure_event(failure(surface, program, input=input), event=name, session=session,
                         ts=T0 + timedelta(minutes=minute))


def mixed(count: int, *, sessions: int = 5, seed: int = 7) -> list[Event]:
    """``count`` events over several signatures and sessions, in time order."""
    import random

    rng = random.Random(seed)
    return [event(rng.choice(SURFACES), rng.choice(PROGRAMS),
                  session=f"s-{rng.randrange(sessions)}", minute=i * 0.5)
            for i in range(count)]
