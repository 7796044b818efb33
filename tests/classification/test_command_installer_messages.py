"""from_command over the documented messages of package managers that cannot run here.

The test set-up installs pip, apt-get, npm and cargo, and tests/classification/
test_command_installers.py runs those for real. yarn, pnpm, conda/mamba, go, RubyGems/Bundler,
Homebrew (macOS), dnf/yum (Fedora/RHEL), apk (Alpine), pacman (Arch), zypper (openSUSE), uv and
poetry are not installed, and most of their failures need their public registry. Each row
below is written from the message template in the tool's own source or documentation (the
version is named on the row), with invented package names; old npm and pip formats are
here too because the installed versions print newer ones.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from failcode import FC, Failure, from_command

NOT_FOUND, INSTALL_FAILED, UNREACHABLE = (FC.CMD_PACKAGE_NOT_FOUND,
                                          FC.CMD_PACKAGE_INSTALL_FAILED,
                                          FC.CMD_PACKAGE_SOURCE_UNREACHABLE)

# id -> (command, exit status, what the tool printed, code, package named (None: none))
ROWS: dict[str, tuple[str, int, str, FC, str | None]] = {
    # yarn 1.22 (classic)
    "yarn1-404": ("yarn add zz-absent", 1,
                  ('error An unexpected error occurred: "https://registry.yarnpkg.com/zz-absent: '
                  'Not found".\n'), NOT_FOUND, "zz-absent"),
    "yarn1-dependency": ("yarn install", 1,
                         ('error Couldn\'t find package "zz-absent@^1.0.0" required by '
                         '"probe@1.0.0" on the "npm" registry.\n'), NOT_FOUND, "zz-absent"),
    "yarn1-version": ("yarn add lib-b@^9.0.0", 1,
                      'error Couldn\'t find any versions for "lib-b" that matches "^9.0.0"\n',
                      NOT_FOUND, "lib-b"),
    "yarn1-dns": ("yarn add lib-b", 1,
                  ('error An unexpected error occurred: "https://registry.yarnpkg.com/lib-b: '
                  'getaddrinfo ENOTFOUND registry.yarnpkg.com".\n'), UNREACHABLE, None),
    # yarn 4 (berry)
    "yarn4-404": ("yarn add zz-absent", 1,
                  ("\u27a4 YN0035: \u2502 zz-absent@npm:^1.0.0: Package not found\n"
                  "\u27a4 YN0035: \u2502   Response Code: 404 (Not Found)\n"),
                  NOT_FOUND, "zz-absent"),
    "yarn4-version": ("yarn add lib-b@^9.0.0", 1,
                      "\u27a4 YN0001: \u2502 Error: lib-b@npm:^9.0.0: No candidates found\n",
                      NOT_FOUND, "lib-b"),
    # pnpm 9
    "pnpm-404": ("pnpm add @zz-scope/absent", 1,
                 (" ERR_PNPM_FETCH_404  GET https://registry.npmjs.org/@zz-scope%2Fabsent: "
                 "Not Found - 404\n"), NOT_FOUND, "@zz-scope/absent"),
    "pnpm-version": ("pnpm add lib-b@^9.0.0", 1,
                     (" ERR_PNPM_NO_MATCHING_VERSION  No matching version found for "
                     "lib-b@^9.0.0\n"), NOT_FOUND, "lib-b"),
    "pnpm-dns": ("pnpm install", 1,
                 (" ERR_PNPM_META_FETCH_FAIL  GET https://registry.npmjs.org/lib-b: request to "
                 "https://registry.npmjs.org/lib-b failed, reason: getaddrinfo ENOTFOUND "
                 "registry.npmjs.org\n"), UNREACHABLE, None),
    "pnpm-peers": ("pnpm install", 1,
                   " ERR_PNPM_PEER_DEP_ISSUES  Unmet peer dependencies\n", INSTALL_FAILED,
                   None),
    # npm 9 and older ("npm ERR!"; the installed npm prints "npm error")
    "npm9-404": ("npm install zz-absent", 1,
                 ("npm ERR! code E404\nnpm ERR! 404 Not Found - GET "
                 "https://registry.npmjs.org/zz-absent - Not found\nnpm ERR! 404\n"
                 "npm ERR! 404  'zz-absent@latest' is not in this registry.\n"),
                 NOT_FOUND, "zz-absent"),
    "npm9-version": ("npm install lib-b@^9.0.0", 1,
                     ("npm ERR! code ETARGET\nnpm ERR! notarget No matching version found for "
                     "lib-b@^9.0.0.\n"), NOT_FOUND, "lib-b"),
    # conda 23-24, mamba 1.5 / libmamba
    "conda-absent": ("conda install zz-absent=1.0", 1,
                     ("PackagesNotFoundError: The following packages are not available from "
                     "current channels:\n\n  - zz-absent=1.0\n\nCurrent channels:\n\n"
                     "  - https://conda.anaconda.org/conda-forge/linux-64\n"),
                     NOT_FOUND, "zz-absent"),
    "conda-env": ("conda env create -f environment.yml", 1,
                  "ResolvePackageNotFound: \n  - zz-absent==1.0\n", NOT_FOUND, "zz-absent"),
    "conda-conflict": ("conda install lib-a lib-b", 1,
                       ("UnsatisfiableError: The following specifications were found to be "
                       "incompatible with each other:\n"), INSTALL_FAILED, None),
    "conda-offline": ("conda install lib-b", 1,
                      ("CondaHTTPError: HTTP 000 CONNECTION FAILED for url "
                      "<https://conda.anaconda.org/conda-forge/linux-64/repodata.json>\n"),
                      UNREACHABLE, None),
    "mamba-absent": ("mamba install zz-absent", 1,
                     ("Could not solve for environment specs\nThe following package could not "
                     "be installed\n\u2514\u2500 zz-absent does not exist (perhaps a typo or a "
                     "missing channel).\n"), NOT_FOUND, "zz-absent"),
    "mamba-requested": ("micromamba install zz-absent", 1,
                        ("Encountered problems while solving:\n  - nothing provides requested "
                        "zz-absent\n"), NOT_FOUND, "zz-absent"),
    # go 1.21
    "go-404": ("go get github.com/zz/absent", 1,
               ("go: module github.com/zz/absent: reading "
               "https://proxy.golang.org/github.com/zz/absent/@v/list: 404 Not Found\n"
               "\tserver response: not found\n"), NOT_FOUND, "github.com/zz/absent"),
    "go-proxy-off": ("go install github.com/zz/tool@latest", 1,
                     "go: github.com/zz/tool@latest: module lookup disabled by GOPROXY=off\n",
                     NOT_FOUND, "github.com/zz/tool"),
    "go-revision": ("go get github.com/zz/lib@v1.2.3", 1,
                    "go: github.com/zz/lib@v1.2.3: invalid version: unknown revision v1.2.3\n",
                    NOT_FOUND, "github.com/zz/lib"),
    "go-dns": ("go mod download", 1,
               ('go: github.com/zz/lib@v1.2.3: Get "https://proxy.golang.org/github.com/zz/lib/'
               '@v/v1.2.3.mod": dial tcp: lookup proxy.golang.org: no such host\n'),
               UNREACHABLE, None),
    # RubyGems 3, Bundler 2
    "gem-absent": ("gem install zz-absent", 2,
                   "ERROR:  Could not find a valid gem 'zz-absent' (>= 0) in any repository\n",
                   NOT_FOUND, "zz-absent"),
    "gem-offline": ("gem install lib-b", 2,
                    ("ERROR:  Could not find a valid gem 'lib-b' (>= 0), here is why:\n"
                    "          Unable to download data from https://rubygems.org/ - SocketError: "
                    "Failed to open TCP connection to rubygems.org:443 (getaddrinfo: Temporary "
                    "failure in name resolution)\n"), UNREACHABLE, None),
    "gem-native": ("gem install zz-native", 1,
                   ("ERROR: Failed to build gem native extension.\n\n    current directory: "
                   "/var/lib/gems/3.1.0/gems/zz-native-1.0.0/ext\n\nGem files will remain "
                   "installed in /var/lib/gems/3.1.0/gems/zz-native-1.0.0 for inspection.\n"),
                   INSTALL_FAILED, "zz-native"),
    "bundler-absent": ("bundle install", 7,
                       ("Could not find gem 'zz-absent (~> 1.0)' in rubygems repository "
                       "https://rubygems.org/ or installed locally.\n"), NOT_FOUND, "zz-absent"),
    "bundler-conflict": ("bundle install", 6,
                         'Bundler could not find compatible versions for gem "lib-b":\n',
                         INSTALL_FAILED, "lib-b"),
    # Homebrew 4
    "brew-absent": ("brew install zz-absent", 1,
                    ('Error: No available formula with the name "zz-absent". Did you mean '
                    "zz-present?\n"), NOT_FOUND, "zz-absent"),
    "brew-search": ("brew install zz-absent", 1,
                    "Error: No formulae or casks found for zz-absent.\n", NOT_FOUND, "zz-absent"),
    # dnf 4, yum 3 (CentOS 7), apk (Alpine 3), pacman, zypper
    "dnf-absent": ("dnf install -y zz-absent", 1,
                   "No match for argument: zz-absent\nError: Unable to find a match: zz-absent\n",
                   NOT_FOUND, "zz-absent"),
    "yum-absent": ("yum install -y zz-absent", 1,
                   "No package zz-absent available.\nError: Nothing to do\n",
                   NOT_FOUND, "zz-absent"),
    "dnf-offline": ("dnf install -y lib-b", 1,
                    ("Errors during downloading metadata for repository 'fedora':\n  - Curl error "
                    "(6): Couldn't resolve host name for https://mirrors.fedoraproject.org/ "
                    "[Could not resolve host: mirrors.fedoraproject.org]\nError: Failed to "
                    "download metadata for repo 'fedora'\n"), UNREACHABLE, None),
    "dnf-conflict": ("dnf install -y zz-app", 1,
                     ("Error: \n Problem: conflicting requests\n  - nothing provides "
                     "libzz.so.1()(64bit) needed by zz-app-1.0-1.fc39.x86_64\n"),
                     INSTALL_FAILED, "zz-app"),
    "apk-absent": ("apk add zz-absent", 1,
                   ("ERROR: unable to select packages:\n  zz-absent (no such package):\n"
                   "    required by: world[zz-absent]\n"), NOT_FOUND, "zz-absent"),
    "pacman-absent": ("pacman -S --noconfirm zz-absent", 1,
                      "error: target not found: zz-absent\n", NOT_FOUND, "zz-absent"),
    "zypper-absent": ("zypper install -y zz-absent", 104,
                      "No provider of 'zz-absent' found.\n", NOT_FOUND, "zz-absent"),
    # uv 0.4
    "uv-absent": ("uv pip install zz-absent", 1,
                  ("  \u00d7 No solution found when resolving dependencies:\n  \u2570\u2500\u25b6 "
                  "Because zz-absent was not found in the package registry and you require "
                  "zz-absent, we can conclude that your requirements are unsatisfiable.\n"),
                  NOT_FOUND, "zz-absent"),
    "uv-conflict": ("uv add lib-b==1.0 lib-b==2.0", 1,
                    ("  \u00d7 No solution found when resolving dependencies:\n"
                     "  \u2570\u2500\u25b6 Because you require lib-b==1.0 and lib-b==2.0, "
                     "we can conclude that your requirements are unsatisfiable.\n"),
                    INSTALL_FAILED, "lib-b"),
    "uv-build": ("uv pip install zz-native==1.0", 1,
                 ("  \u00d7 Failed to build `zz-native==1.0`\n  \u251c\u2500\u25b6 The build "
                 "backend returned an error\n"), INSTALL_FAILED, "zz-native"),
    "uv-dns": ("uv pip install lib-b", 2,
               ("error: Failed to fetch: `https://pypi.org/simple/lib-b/`\n  Caused by: Request "
               "failed after 3 retries\n  Caused by: error sending request for url "
               "(https://pypi.org/simple/lib-b/)\n  Caused by: client error (Connect)\n"
               "  Caused by: dns error: failed to lookup address information: Temporary "
               "failure in name resolution\n"), UNREACHABLE, None),
    # poetry 1.8 (its solver's explanations are PubGrub's, as dart pub's are)
    "poetry-absent": ("poetry add zz-absent", 1,
                      ("Because probe depends on zz-absent (^1.0) which doesn't match any "
                      "versions, version solving failed.\n"), NOT_FOUND, "zz-absent"),
    "poetry-add": ("poetry add zz-absent", 1,
                   "Could not find a matching version of package zz-absent\n",
                   NOT_FOUND, "zz-absent"),
    "poetry-conflict": ("poetry lock", 1,
                        ("Because lib-a (1.0) depends on lib-b (>=2.0)\n and probe depends on "
                        "lib-b (<2.0), lib-a is forbidden.\nSo, because probe depends on lib-a "
                        "(1.0), version solving failed.\n"), INSTALL_FAILED, None),
    # cargo texts the offline runs do not print
    "cargo-version": ("cargo build", 101,
                      ('error: failed to select a version for the requirement `lib-b = "^9"`\n'
                      "candidate versions found which didn't match: 1.0.0\n"),
                      NOT_FOUND, "lib-b"),
    "cargo-conflict": ("cargo build", 101,
                       ("error: failed to select a version for `lib-b`.\n    ... required by "
                       "package `probe v0.1.0`\n"), INSTALL_FAILED, "lib-b"),
    "cargo-near-miss": ("cargo add serde_jsn", 101,
                        ("error: no matching package found\nsearched package name: `serde_jsn`\n"
                        "perhaps you meant:      serde_json\n"), NOT_FOUND, "serde_jsn"),
    # pip 20 and pip-tools (the installed pip prints newer formats)
    "pip20-build": ("pip install zz-native==1.0", 1,
                    ("Collecting zz-native==1.0\n  Downloading zz-native-1.0.tar.gz (10 kB)\n"
                    "ERROR: Command errored out with exit status 1:\n     command: "
                    "/usr/bin/python3 -c 'import setuptools' egg_info\n"),
                    INSTALL_FAILED, "zz-native"),
    "pip-compile-conflict": ("pip-compile requirements.in", 1,
                             ("Traceback (most recent call last):\n  File \"/usr/lib/python3/"
                             "site-packages/piptools/resolver.py\", line 1, in resolve\n"
                             "pip._internal.exceptions.DistributionNotFound: "
                             "ResolutionImpossible: for help visit "
                             "https://pip.pypa.io/en/latest/topics/dependency-resolution/\n"),
                             INSTALL_FAILED, None),
    "pip-oserror": ("pip install lib-b", 1,
                    ("ERROR: Could not install packages due to an OSError: "
                    "HTTPSConnectionPool(host='files.pythonhosted.org', port=443): Max retries "
                    "exceeded with url: /lib_b-1.0.whl (Caused by NewConnectionError('<x>: "
                    "Failed to establish a new connection: [Errno 101] Network is "
                    "unreachable'))\n"), UNREACHABLE, None),
}


def classify_row(command: str, status: int, text: str, purpose: str = "general") -> Failure:
    result = from_command(command, status, stderr=text, purpose=purpose)
    assert isinstance(result, Failure), result
    return result


@pytest.mark.parametrize(("command", "status", "text", "code", "package"), ROWS.values(),
                         ids=ROWS.keys())
def test_a_documented_install_message_gets_its_code(command: str, status: int, text: str,
                                                    code: FC, package: str | None) -> None:
    """Each package manager's not-found, cannot-install and unreachable messages get
    FC-CMD-010, -011 and -012, naming the package (without its version) when it is shown."""
    failure = classify_row(command, status, text)
    assert failure.code == code
    assert failure.params.get("package") == package
    assert failure.params["program"] == command.split(maxsplit=1)[0]


def test_an_install_failure_is_attributed_to_the_installer_not_the_last_program() -> None:
    """``brew install X && make``: the install stopped the script, so brew is named."""
    failure = classify_row("brew install zz-absent && make", 1,
                           'Error: No available formula with the name "zz-absent".\n', "build")
    assert failure.code == NOT_FOUND
    assert failure.params["program"] == "brew"


def test_pubgrub_text_under_another_program_names_that_program() -> None:
    """PubGrub's explanation is shared by several tools (poetry, dart pub): under ``flutter pub
    get`` it names flutter, not poetry."""
    failure = classify_row("flutter pub get", 1,
                           "Because app depends on zz_absent 1.0.0 which doesn't match any "
                           "versions, version solving failed.\n")
    assert failure.code == NOT_FOUND
    assert failure.params == {"program": "flutter", "package": "zz_absent"}


def test_go_missing_module_in_a_build_is_a_missing_module() -> None:
    """go's "no required module provides package" (an import go.mod lacks) is FC-CMD-002 at
    the importing file, also when the command's purpose is to build."""
    failure = classify_row("go build ./...", 1,
                           "main.go:5:2: no required module provides package github.com/zz/lib; "
                           "to add it:\n\tgo get github.com/zz/lib\n", "build")
    assert failure.code == FC.CMD_MISSING_MODULE
    assert failure.params["module"] == "github.com/zz/lib"
    assert failure.location == "main.go"


@pytest.mark.parametrize(("command", "status", "text"), [
    pytest.param("curl -fsS https://example.invalid/", 6,
                 "curl: (6) Could not resolve host: example.invalid\n", id="curl-dns"),
    pytest.param("python fetch.py", 1,
                 "Traceback (most recent call last):\n  File \"fetch.py\", line 1, in <module>\n"
                 "ConnectionRefusedError: [Errno 111] Connection refused\n", id="script-refused"),
    pytest.param("pip install -e . && python app.py", 1,
                 "ERROR: pip's dependency resolver does not currently take into account all the "
                 "packages that are installed. This behaviour is the source of the following "
                 "dependency conflicts.\nlib-a 1.0 requires lib-b>=2, but you have lib-b 1.0 "
                 "which is incompatible.\nTraceback (most recent call last):\n  File \"app.py\","
                 " line 1, in <module>\nValueError: bad\n", id="pip-warning-then-crash"),
    pytest.param("apt-get update", 100,
                 "W: Failed to fetch http://deb.example/dists/x/InRelease  Temporary failure "
                 "resolving 'deb.example'\n", id="apt-warning-only"),
])
def test_other_failures_are_not_install_failures(command: str, status: int, text: str) -> None:
    """A connection failure outside an installer's own fetch, pip's post-install conflict
    notice (pip exits 0 after it), and a warning apt says it ignored are no install verdict."""
    failure = classify_row(command, status, text)
    assert failure.code not in (NOT_FOUND, INSTALL_FAILED, UNREACHABLE)


NAMES = st.from_regex(r"[a-z][a-z0-9]{0,8}(?:[-_.][a-z0-9]{1,8}){0,3}", fullmatch=True)
SPECS = st.sampled_from(["", "==1.0", ">=2,<3", "~=1.4", "!=0.1", "[extra]>=1", "===7"])


@given(name=NAMES, spec=SPECS)
def test_pip_names_the_package_whatever_version_was_asked_for(name: str, spec: str) -> None:
    """pip's not-found message names the package without the version constraint, for any
    valid name and constraint."""
    text = (f"ERROR: Could not find a version that satisfies the requirement {name}{spec} "
            f"(from versions: none)\nERROR: No matching distribution found for {name}{spec}\n")
    failure = classify_row(f"pip install '{name}{spec}'", 1, text)
    assert failure.code == NOT_FOUND
    assert failure.params["package"] == name
