"""The failcode command line, run as a real process."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from failcode.codes._docs import render_docs
from tests._paths import REPO

if TYPE_CHECKING:
    from pathlib import Path

CATALOG_SOURCE = '''
from failcode import Catalog, Category, CodeEnum, CodeSpec, Kind

class DemoCode(CodeEnum):
    A = CodeSpec(code="DEMO-NET-001", slug="net-down", kind=Kind.ENV_ERROR,
                 category=Category.ENVIRONMENT, error_class="net_down",
                 message="The network is down.", remedy="Reconnect.",
                 impact="Nothing can be fetched.", example="Wi-Fi off.", since="1.0")
    B = CodeSpec(code="DEMO-NET-002", slug="net-slow", kind=Kind.TOOL_ERROR,
                 category=Category.TRANSIENT, error_class="net_slow",
                 message="The network is slow.", impact="Fetches are late.",
                 example="A congested link.", since="1.0")

DEMO = Catalog("DEMO", areas={"NET": "networking"}, codes=DemoCode)
'''


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run `python -m failcode ARGS` and capture its output."""
    return subprocess.run([sys.executable, "-m", "failcode", *args], capture_output=True,
                          text=True, cwd=cwd, check=False, timeout=60)


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """A temporary catalog module with a fresh lock beside it."""
    (tmp_path / "demo_catalog.py").write_text(CATALOG_SOURCE)
    result = run("codes", "lock", "--catalog", "demo_catalog:DEMO", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "demo-codes.lock.json").exists()
    return tmp_path


def edit_catalog(directory: Path, old: str, new: str) -> None:
    """Replace text in the temporary catalog's source."""
    path = directory / "demo_catalog.py"
    source = path.read_text()
    assert old in source
    path.write_text(source.replace(old, new))


def test_codes_lists_the_catalog() -> None:
    """`failcode codes` prints a table with every FC code."""
    result = run("codes")
    assert result.returncode == 0
    assert result.stdout.splitlines()[0].split() == ["CODE", "SLUG", "KIND", "CATEGORY",
                                                     "RETRYABILITY", "STATUS"]
    assert "FC-PROV-003" in result.stdout
    assert "provider-rate-limit" in result.stdout


def test_codes_json() -> None:
    """`failcode codes --json` prints machine-readable codes."""
    rows = json.loads(run("codes", "--json").stdout)
    assert {"code": "FC-PROV-003", "slug": "provider-rate-limit", "kind": "provider_error",
            "category": "transient", "severity": "error", "retryability": "retryable",
            "retired": False} in rows


def test_fc_catalog_agrees_with_committed_lock() -> None:
    """The committed lock of failcode's own catalog is current."""
    result = run("codes", "check")
    assert result.returncode == 0, result.stderr


def test_check_passes_on_fresh_lock(demo: Path) -> None:
    """A catalog checked against the lock it just wrote passes."""
    result = run("codes", "check", "--catalog", "demo_catalog:DEMO", cwd=demo)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(("old", "new", "needle"), [
    ('''    B = CodeSpec(code="DEMO-NET-002"''', '''    B = CodeSpec(code="DEMO-NET-003"''',
     "DEMO-NET-002 (net-slow) is in the lock but missing"),
    ('slug="net-slow"', 'slug="net-flaky"', "DEMO-NET-002 was issued as 'net-slow'"),
    ('kind=Kind.TOOL_ERROR', 'kind=Kind.SYSTEM_ERROR', "DEMO-NET-002 changed kind"),
    ('category=Category.TRANSIENT', 'category=Category.DEFECT',
     "DEMO-NET-002 changed category"),
])
def test_check_fails_on_broken_lock(demo: Path, old: str, new: str, needle: str) -> None:
    """A deleted, reused, re-kinded or re-categorized code fails the check, named."""
    edit_catalog(demo, old, new)
    result = run("codes", "check", "--catalog", "demo_catalog:DEMO", cwd=demo)
    assert result.returncode == 1
    assert needle in result.stderr


@pytest.mark.parametrize(("old", "new", "needle"), [
    ('remedy="Reconnect.",', "", "DEMO-NET-001: the environment category needs a remedy"),
    ('code="DEMO-NET-002"', 'code="DEMO-DISK-002"', "area DISK is not declared"),
])
def test_check_fails_on_registry_rule(demo: Path, old: str, new: str, needle: str) -> None:
    """A code without its remedy or in an undeclared area fails the check, named."""
    edit_catalog(demo, old, new)
    result = run("codes", "check", "--catalog", "demo_catalog:DEMO", cwd=demo)
    assert result.returncode == 1
    assert needle in result.stderr


def test_lock_refuses_to_rewrite_history(demo: Path) -> None:
    """`codes lock` refuses a re-kinded code instead of updating the lock."""
    before = (demo / "demo-codes.lock.json").read_text()
    edit_catalog(demo, 'kind=Kind.TOOL_ERROR', 'kind=Kind.SYSTEM_ERROR')
    result = run("codes", "lock", "--catalog", "demo_catalog:DEMO", cwd=demo)
    assert result.returncode == 1
    assert (demo / "demo-codes.lock.json").read_text() == before


def test_new_code_needs_locking(demo: Path) -> None:
    """A new code fails the check until `codes lock` records it."""
    edit_catalog(demo, "\nDEMO = ", '''
    C = CodeSpec(code="DEMO-NET-003", slug="net-gone", kind=Kind.TOOL_ERROR,
                 category=Category.DEFECT, error_class="net_gone", message="Gone.",
                 impact="None.", example="None.", since="1.1")

DEMO = ''')
    result = run("codes", "check", "--catalog", "demo_catalog:DEMO", cwd=demo)
    assert result.returncode == 1
    assert "DEMO-NET-003 (net-gone) is not in the lock yet" in result.stderr
    assert run("codes", "lock", "--catalog", "demo_catalog:DEMO", cwd=demo).returncode == 0
    assert run("codes", "check", "--catalog", "demo_catalog:DEMO", cwd=demo).returncode == 0


def test_retiring_keeps_the_code(demo: Path) -> None:
    """Retiring a code keeps it; the lock marks it retired and the check passes."""
    edit_catalog(demo, 'example="A congested link.", since="1.0")',
                 'example="A congested link.", since="1.0", retired=True)')
    assert run("codes", "lock", "--catalog", "demo_catalog:DEMO", cwd=demo).returncode == 0
    lock = json.loads((demo / "demo-codes.lock.json").read_text())
    assert lock["codes"]["DEMO-NET-002"]["retired"] is True
    assert run("codes", "check", "--catalog", "demo_catalog:DEMO", cwd=demo).returncode == 0


def test_bad_catalog_path_is_a_usage_error(tmp_path: Path) -> None:
    """An unimportable --catalog exits 2 with a clear message, no traceback."""
    result = run("codes", "check", "--catalog", "no_such_module:X", cwd=tmp_path)
    assert result.returncode == 2
    assert "cannot import 'no_such_module'" in result.stderr
    assert "Traceback" not in result.stderr


def test_explain_prints_one_code() -> None:
    """`failcode explain` prints meaning, impact, remedy, example and status."""
    result = run("explain", "FC-CMD-001")
    assert result.returncode == 0
    for needle in ("FC-CMD-001  command-not-found  (active since", "Impact:", "Remedy:",
                   "Example:", "The program cargo is not installed"):
        assert needle in result.stdout


def test_explain_unknown_code_suggests() -> None:
    """An unknown code exits 2 and suggests the nearest codes (a doubled digit of FC-CMD-001)."""
    result = run("explain", "FC-CMD-0001")
    assert result.returncode == 2
    assert "did you mean" in result.stderr
    assert "FC-CMD-001" in result.stderr


def test_explain_user_catalog(demo: Path) -> None:
    """`explain --catalog` looks codes up in a user catalog too."""
    result = run("explain", "DEMO-NET-001", "--catalog", "demo_catalog:DEMO", cwd=demo)
    assert result.returncode == 0
    assert "net-down" in result.stdout


@pytest.mark.parametrize("fmt", ["md", "json", "html"])
def test_docs_formats(fmt: str) -> None:
    """`codes docs` renders every code in each format."""
    result = run("codes", "docs", "--format", fmt)
    assert result.returncode == 0
    assert "FC-PROV-003" in result.stdout
    if fmt == "json":
        document = json.loads(result.stdout)
        assert document["kinds"]["build_error"]["category"] == "task"
        assert "never reused" in document["stability_policy"]


def test_committed_docs_are_current() -> None:
    """docs/codes.md is generated from the enumeration; regenerate it when this fails."""
    from failcode import FC_CATALOG

    committed = (REPO / "docs" / "codes.md").read_text(encoding="utf-8")
    assert committed == render_docs(FC_CATALOG, "md"), (
        "docs/codes.md is stale: run `failcode codes docs --format md -o docs/codes.md`")


def test_committed_schema_is_current() -> None:
    """docs/failure.schema.json is the exported schema; regenerate it when this fails."""
    committed = json.loads((REPO / "docs" / "failure.schema.json").read_text(encoding="utf-8"))
    assert committed == json.loads(run("schema").stdout), (
        "docs/failure.schema.json is stale: run `failcode schema > docs/failure.schema.json`")
