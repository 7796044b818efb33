"""from_command over REAL package managers run in a temporary directory, offline.

pip reads only local directories and handmade wheels; apt-get reads a private root
(``-o Dir=...``) whose sources are a local folder and a stub on 127.0.0.1, so the machine's own
package state is never read or changed; npm asks a stub registry on 127.0.0.1; cargo resolves
``--offline`` or against a registry address where nothing listens. Outside CI a missing tool
skips its tests; with CI=true it fails them.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import getpass
import hashlib
import http.server
import importlib.util
import json
import os
import subprocess
import sys
import threading
import zipfile
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from failcode import FC, Failure, from_command
from tests._needs import missing, need_tool

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

REFUSED = "127.0.0.1:1"
"""An address where nothing listens: every connection is refused at once."""


@dataclass(frozen=True)
class Run:
    """One real command and what it printed."""

    argv: list[str]
    cwd: Path
    returncode: int
    stdout: bytes
    stderr: bytes

    def failure(self, purpose: str = "general") -> Failure:
        result = from_command(self.argv, self.returncode, self.stdout, self.stderr,
                              purpose=purpose, cwd=str(self.cwd))
        assert isinstance(result, Failure), (result, self.stdout, self.stderr)
        return result


def run(argv: list[str], cwd: Path, *, env: dict[str, str] | None = None) -> Run:
    """Run ``argv`` in ``cwd`` under the C locale (the English messages) and keep its output."""
    environment = {k: v for k, v in os.environ.items()
                   if not k.upper().startswith(("PIP_", "NPM_CONFIG_", "CARGO_"))}
    environment.update(LANG="C.UTF-8", LC_ALL="C.UTF-8", NO_COLOR="1", **(env or {}))
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, env=environment, timeout=300,
                          check=False)
    return Run(argv, cwd, proc.returncode, proc.stdout, proc.stderr)


# -- pip ----------------------------------------------------------------------------------------
def pip(*args: str) -> list[str]:
    """``python -m pip`` with no configuration file, no version check and no prompts."""
    if importlib.util.find_spec("pip") is None:
        missing("pip is not installed in the test environment")
    return [sys.executable, "-m", "pip", "--isolated", "--disable-pip-version-check",
            "--no-input", *args]


PIP_ENV = {"PIP_CONFIG_FILE": os.devnull}


def wheel(folder: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> None:
    """A minimal pure-Python wheel of metadata only (PEP 427), written by hand."""
    dist = f"{name}-{version}.dist-info"
    files = {
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                            + "".join(f"Requires-Dist: {r}\n" for r in requires),
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\n"
                         "Tag: py3-none-any\n",
    }
    def digest(text: str) -> str:
        raw = hashlib.sha256(text.encode()).digest()
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    record = "".join(f"{path},sha256={digest(text)},{len(text.encode())}\n"
                     for path, text in files.items()) + f"{dist}/RECORD,,\n"
    files[f"{dist}/RECORD"] = record
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(folder / f"{name}-{version}-py3-none-any.whl", "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)


def test_pip_package_nowhere_to_be_found(tmp_path: Path) -> None:
    """pip's "No matching distribution found" is FC-CMD-010 naming the package, not a generic
    command failure."""
    (tmp_path / "empty").mkdir()
    result = run(pip("install", "--no-index", "--find-links", "empty", "not-a-package-zz"),
                 tmp_path, env=PIP_ENV)
    failure = result.failure("general")
    assert failure.code == FC.CMD_PACKAGE_NOT_FOUND
    assert failure.kind == "dependency_error"
    assert failure.params == {"program": "pip", "package": "not-a-package-zz"}


def test_pip_version_that_does_not_exist_names_the_package(tmp_path: Path) -> None:
    """A version no source has (``pc==9.9`` when only 1.0 and 2.0 exist) is not found, and the
    package is named without the version."""
    wheel(tmp_path / "wheels", "pc", "1.0")
    wheel(tmp_path / "wheels", "pc", "2.0")
    result = run(pip("install", "--no-index", "--find-links", "wheels", "--target", "out",
                     "pc==9.9"), tmp_path, env=PIP_ENV)
    failure = result.failure("general")
    assert failure.code == FC.CMD_PACKAGE_NOT_FOUND
    assert failure.params["package"] == "pc"


def test_pip_conflicting_requirements_are_an_install_failure(tmp_path: Path) -> None:
    """pip's ResolutionImpossible (two packages needing two versions of a third) is
    FC-CMD-011 of class dependency_conflict."""
    wheel(tmp_path / "wheels", "pa", "1.0", ("pc==1.0",))
    wheel(tmp_path / "wheels", "pb", "1.0", ("pc==2.0",))
    wheel(tmp_path / "wheels", "pc", "1.0")
    wheel(tmp_path / "wheels", "pc", "2.0")
    result = run(pip("install", "--no-index", "--find-links", "wheels", "--target", "out",
                     "pa", "pb"), tmp_path, env=PIP_ENV)
    failure = result.failure("general")
    assert failure.code == FC.CMD_PACKAGE_INSTALL_FAILED
    assert failure.error_class == "dependency_conflict"
    assert failure.kind == "dependency_error"


BACKEND = '''\
import os

def get_requires_for_build_wheel(config_settings=None):
    return []

def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    name = "broken_pkg-0.1.dist-info"
    os.makedirs(os.path.join(metadata_directory, name))
    with open(os.path.join(metadata_directory, name, "METADATA"), "w") as f:
        f.write("Metadata-Version: 2.1\\nName: broken-pkg\\nVersion: 0.1\\n")
    return name

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    raise SystemExit("src/ext.c:1:10: fatal error: zz_missing.h: No such file or directory")
'''


def test_pip_failed_wheel_build_is_an_install_failure(tmp_path: Path) -> None:
    """A package whose wheel build fails is FC-CMD-011 package_build_failed naming it, even
    though the build printed a compiler error of its own."""
    project = tmp_path / "broken-pkg"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n')
    (project / "backend.py").write_text(BACKEND)
    result = run(pip("install", "--no-index", "--target", "out", "./broken-pkg"), tmp_path,
                 env=PIP_ENV)
    failure = result.failure("general")
    assert failure.code == FC.CMD_PACKAGE_INSTALL_FAILED
    assert failure.error_class == "package_build_failed"
    assert failure.params["package"] == "broken-pkg"  # the Name in its metadata


def test_pip_connection_refused_is_not_a_missing_package(tmp_path: Path) -> None:
    """pip retrying a refused connection, then reporting "No matching distribution", could
    not look the package up at all: FC-CMD-012 (environment), not FC-CMD-010."""
    result = run(pip("install", "--retries", "1", "--index-url", f"http://{REFUSED}/simple/",
                     "not-a-package-zz"), tmp_path, env=PIP_ENV)
    failure = result.failure("general")
    assert failure.code == FC.CMD_PACKAGE_SOURCE_UNREACHABLE
    assert failure.kind == "env_error"
    assert failure.params == {"program": "pip"}
    assert failure.metadata["package"] == "not-a-package-zz"


def test_one_outage_is_one_signature_whatever_was_being_installed(tmp_path: Path) -> None:
    """Unreachable sources sign without the package: two packages, one failure."""
    signatures = {
        run(pip("install", "--retries", "1", "--index-url", f"http://{REFUSED}/simple/", name),
            tmp_path, env=PIP_ENV).failure("general").signature
        for name in ("zz-first", "zz-second")}
    assert len(signatures) == 1


@pytest.mark.parametrize("purpose", ["test", "build", "debug", "doctor"])
def test_a_failed_install_before_the_real_step_is_a_dependency_error_in_every_purpose(
        tmp_path: Path, purpose: str) -> None:
    """``pip install X && pytest`` stopped at the install: a missing package, whatever the
    command meant to do next, attributed to pip rather than to the runner."""
    (tmp_path / "empty").mkdir()
    install = " ".join(pip("install", "--no-index", "--find-links", "empty",
                           "not-a-package-zz"))
    script = f"{install} && {sys.executable} -m pytest -q"
    result = run(["bash", "-c", script], tmp_path, env=PIP_ENV)
    failure = result.failure(purpose)
    assert failure.code == FC.CMD_PACKAGE_NOT_FOUND
    assert failure.params["program"] == "pip"


def test_the_same_missing_package_has_one_signature_in_two_directories(tmp_path: Path) -> None:
    """The package's identity is in the signature, the directory is not."""
    signatures = set()
    for folder in ("one", "two"):
        (tmp_path / folder / "empty").mkdir(parents=True)
        result = run(pip("install", "--no-index", "--find-links", "empty", "zz-absent"),
                     tmp_path / folder, env=PIP_ENV)
        signatures.add(result.failure("general").signature)
    other = run(pip("install", "--no-index", "--find-links", "empty", "zz-other"),
                tmp_path / "one", env=PIP_ENV).failure("general").signature
    assert len(signatures) == 1
    assert other not in signatures


# -- apt-get ------------------------------------------------------------------------------------
PACKAGES = """\
Package: needs-ghost
Version: 1.0
Architecture: all
Depends: ghost-pkg
Maintainer: t <t@example.org>
Description: refers to a package nobody provides
Filename: pool/needs-ghost_1.0_all.deb
Size: 100
SHA256: {zero}

Package: wants-new-lib
Version: 1.0
Architecture: all
Depends: lib-old (>= 2.0)
Maintainer: t <t@example.org>
Description: needs a version of lib-old nobody has
Filename: pool/wants-new-lib_1.0_all.deb
Size: 100
SHA256: {zero}

Package: lib-old
Version: 1.0
Architecture: all
Maintainer: t <t@example.org>
Description: the old library
Filename: pool/lib-old_1.0_all.deb
Size: 100
SHA256: {zero}
""".format(zero="0" * 64)


class _Files(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        del format, args


@dataclass
class Apt:
    """apt-get confined to a private root under a temporary directory."""

    root: Path

    def argv(self, *args: str) -> list[str]:
        options = [f"Dir={self.root}", f"Dir::State::status={self.root}/status",
                   "Debug::NoLocking=1", f"APT::Sandbox::User={getpass.getuser()}",
                   "Acquire::Retries=0"]
        return [need_tool("apt-get"), *(f"-o{o}" for o in options), *args]

    def sources(self, *lines: str) -> None:
        (self.root / "etc/apt/sources.list").write_text("".join(f"{x}\n" for x in lines))


def make_apt(root: Path) -> Apt:
    for folder in ("etc/apt/sources.list.d", "etc/apt/preferences.d", "etc/apt/apt.conf.d",
                   "var/lib/apt/lists/partial", "var/cache/apt/archives/partial", "repo"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    (root / "status").write_text("")
    (root / "repo/Packages").write_text(PACKAGES)
    return Apt(root)


@pytest.fixture
def apt(tmp_path: Path) -> Apt:
    """A private apt root whose only source is a local folder, its index read."""
    confined = make_apt(tmp_path / "apt")
    confined.sources(f"deb [trusted=yes] file:{confined.root}/repo ./")
    update = run(confined.argv("update"), tmp_path)
    assert update.returncode == 0, update.stderr
    return confined


@contextlib.contextmanager
def serving(handler: Any) -> Iterator[int]:
    """An HTTP server on 127.0.0.1 in a thread for the block; yields its port."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_apt_package_nobody_has(apt: Apt) -> None:
    """``E: Unable to locate package`` is FC-CMD-010 naming the package and apt-get."""
    failure = run(apt.argv("install", "-s", "not-a-package-zz"), apt.root).failure("general")
    assert failure.code == FC.CMD_PACKAGE_NOT_FOUND
    assert failure.kind == "dependency_error"
    assert failure.params == {"program": "apt-get", "package": "not-a-package-zz"}


def test_apt_package_without_installation_candidate(apt: Apt) -> None:
    """A package only referred to by another (``has no installation candidate``) is not
    found either."""
    failure = run(apt.argv("install", "-s", "ghost-pkg"), apt.root).failure("general")
    assert failure.code == FC.CMD_PACKAGE_NOT_FOUND
    assert failure.params["package"] == "ghost-pkg"


def test_apt_unmet_dependencies_are_an_install_failure(apt: Apt) -> None:
    """``E: Unable to correct problems, you have held broken packages`` is FC-CMD-011
    dependency_conflict naming the package whose dependencies are unmet."""
    failure = run(apt.argv("install", "-s", "wants-new-lib"), apt.root).failure("general")
    assert failure.code == FC.CMD_PACKAGE_INSTALL_FAILED
    assert failure.error_class == "dependency_conflict"
    assert failure.params["package"] == "wants-new-lib"


def test_apt_not_found_after_an_index_refresh_apt_ignored_stays_not_found(
        tmp_path: Path) -> None:
    """``apt-get update && apt-get install X``: the refresh warns that a mirror was unreachable
    (``W: Failed to fetch``, "ignored, or old ones used instead") and exits 0; the install then
    looks X up in the index it has and does not find it. apt's verdict is the missing
    package, not the network."""
    confined = make_apt(tmp_path / "apt")
    confined.sources(f"deb [trusted=yes] file:{confined.root}/repo ./",
                     f"deb [trusted=yes] http://{REFUSED}/ ./")
    update, install = (" ".join(confined.argv(*args)) for args in (
        ("update",), ("install", "-y", "-s", "not-a-package-zz")))
    result = run(["bash", "-c", f"{update} && {install}"], tmp_path)
    assert b"W: Failed to fetch" in result.stderr  # the case this test is about
    failure = result.failure("general")
    assert failure.code == FC.CMD_PACKAGE_NOT_FOUND
    assert failure.params["package"] == "not-a-package-zz"


def test_apt_download_from_a_mirror_that_refuses_is_unreachable_sources(
        tmp_path: Path) -> None:
    """The install's own download failing to connect (``E: Failed to fetch ... Could not
    connect``) is FC-CMD-012, not a missing package."""
    confined = make_apt(tmp_path / "apt")
    with serving(functools.partial(_Files, directory=str(confined.root / "repo"))) as port:
        confined.sources(f"deb [trusted=yes] http://127.0.0.1:{port}/ ./")
        assert run(confined.argv("update"), tmp_path).returncode == 0
    failure = run(confined.argv("install", "-y", "-d", "lib-old"), tmp_path).failure("general")
    assert failure.code == FC.CMD_PACKAGE_SOURCE_UNREACHABLE
    assert failure.params == {"program": "apt-get"}


def test_apt_archive_missing_on_the_mirror_is_a_package_not_found(tmp_path: Path) -> None:
    """An index that names an archive the mirror no longer has (``404`` while fetching the
    .deb: a stale index) is the package not found, naming it."""
    confined = make_apt(tmp_path / "apt")
    with serving(functools.partial(_Files, directory=str(confined.root / "repo"))) as port:
        confined.sources(f"deb [trusted=yes] http://127.0.0.1:{port}/ ./")
        assert run(confined.argv("update"), tmp_path).returncode == 0
        result = run(confined.argv("install", "-y", "-d", "lib-old"), tmp_path)
    failure = result.failure("general")
    assert failure.code == FC.CMD_PACKAGE_NOT_FOUND
    assert failure.params["package"] == "lib-old"


# -- npm ----------------------------------------------------------------------------------------
def _packument(name: str, versions: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"name": name, "dist-tags": {"latest": max(versions)}, "versions": {
        version: {"name": name, "version": version, **extra,
                  "dist": {"tarball": f"http://{REFUSED}/{name}-{version}.tgz",
                           "shasum": "0" * 40}}
        for version, extra in versions.items()}}


REGISTRY = {
    "/lib-b": _packument("lib-b", {"1.0.0": {}, "2.0.0": {}}),
    "/peer-needs-b2": _packument("peer-needs-b2", {
        "1.0.0": {"peerDependencies": {"lib-b": "^2.0.0"}}}),
}


class _Registry(http.server.BaseHTTPRequestHandler):
    """A registry that knows two packages and answers 404 for every other name."""

    def do_GET(self) -> None:  # the base class names it
        document = REGISTRY.get(self.path)
        body = json.dumps(document or {"error": "Not found"}).encode()
        self.send_response(200 if document else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        del format, args


@pytest.fixture(scope="module")
def registry() -> Iterator[str]:
    """The stub registry's URL."""
    with serving(_Registry) as port:
        yield f"http://127.0.0.1:{port}"


def npm(tmp_path: Path, registry: str, *args: str,
        dependencies: dict[str, str] | None = None) -> Run:
    """``npm install ARGS`` in a fresh project, with its own cache and no user config."""
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (project / "package.json").write_text(json.dumps(
        {"name": "probe", "version": "1.0.0", "dependencies": dependencies or {}}))
    argv = [need_tool("npm"), "install", *args, "--registry", registry, "--no-audit",
            "--no-fund", "--fetch-retries", "0", "--cache", str(tmp_path / "cache"),
            "--userconfig", str(tmp_path / "npmrc")]
    return run(argv, project, env={"npm_config_update_notifier": "false"})


@pytest.mark.parametrize("spec", ["not-a-package-zz", "@zz-scope/not-a-package-zz"])
def test_npm_404_is_a_package_not_found(tmp_path: Path, registry: str, spec: str) -> None:
    """npm's E404 from the registry is FC-CMD-010 naming the package (a scope kept)."""
    failure = npm(tmp_path, registry, spec).failure("general")
    assert failure.code == FC.CMD_PACKAGE_NOT_FOUND
    assert failure.params == {"program": "npm", "package": spec}
    assert failure.metadata["diagnostic"] == "E404"


def test_npm_version_that_does_not_exist_is_a_package_not_found(tmp_path: Path,
                                                                registry: str) -> None:
    """npm's ETARGET (no version matches ``^9``) names the package without the range."""
    failure = npm(tmp_path, registry, "lib-b@^9").failure("general")
    assert failure.code == FC.CMD_PACKAGE_NOT_FOUND
    assert failure.params["package"] == "lib-b"


def test_npm_unresolvable_peer_dependency_is_an_install_failure(tmp_path: Path,
                                                                 registry: str) -> None:
    """npm's ERESOLVE is FC-CMD-011 dependency_conflict naming the dependency it could not
    resolve."""
    result = npm(tmp_path, registry, dependencies={"lib-b": "1.0.0", "peer-needs-b2": "1.0.0"})
    failure = result.failure("build")
    assert failure.code == FC.CMD_PACKAGE_INSTALL_FAILED
    assert failure.error_class == "dependency_conflict"
    assert failure.params["package"] == "lib-b"


def test_npm_refused_connection_is_unreachable_sources(tmp_path: Path) -> None:
    """npm's ECONNREFUSED is FC-CMD-012, whatever package was asked for."""
    failure = npm(tmp_path, f"http://{REFUSED}", "not-a-package-zz").failure("general")
    assert failure.code == FC.CMD_PACKAGE_SOURCE_UNREACHABLE
    assert failure.metadata["diagnostic"] == "ECONNREFUSED"


# -- cargo --------------------------------------------------------------------------------------
MANIFEST = """[package]
name = "probe"
version = "0.1.0"
edition = "2021"

[dependencies]
not-a-package-zz = "1"
"""


@pytest.fixture
def crate(tmp_path: Path) -> Path:
    """A crate that depends on a crate no registry has."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src/main.rs").write_text("fn main() {}\n")
    (tmp_path / "Cargo.toml").write_text(MANIFEST)
    return tmp_path


def cargo(crate: Path, *args: str) -> Run:
    return run([need_tool("cargo"), *args], crate,
               env={"CARGO_HOME": str(crate / "cargo-home"), "CARGO_TERM_COLOR": "never"})


@pytest.mark.parametrize(("args", "purpose"), [
    (("generate-lockfile", "--offline"), "general"),
    (("build", "--offline"), "build"),
    (("add", "not-a-package-zz", "--offline"), "general"),
])
def test_cargo_crate_nobody_has(crate: Path, args: tuple[str, ...], purpose: str) -> None:
    """cargo's "no matching package named" (and cargo add's "could not be found in registry
    index") is FC-CMD-010, also when the command's purpose is to build."""
    failure = cargo(crate, *args).failure(purpose)
    assert failure.code == FC.CMD_PACKAGE_NOT_FOUND
    assert failure.params == {"program": "cargo", "package": "not-a-package-zz"}


def test_cargo_registry_that_refuses_is_unreachable_sources(crate: Path) -> None:
    """cargo failing to connect to its registry is FC-CMD-012."""
    failure = cargo(crate, "generate-lockfile", "--config", "net.retry=0",
                    "--config", 'source.crates-io.replace-with="stub"',
                    "--config", f'source.stub.registry="sparse+http://{REFUSED}/"',
                    ).failure("general")
    assert failure.code == FC.CMD_PACKAGE_SOURCE_UNREACHABLE
    assert failure.params == {"program": "cargo"}
