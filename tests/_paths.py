"""Where the tests find the repository, their own fixtures and the shared data folder."""
import os
from pathlib import Path

TESTS = Path(__file__).resolve().parent
"""The tests folder: fixtures/ and golden/ live here, whatever layer folder a test is in."""
REPO = TESTS.parent
"""The repository root."""
SHARED = Path(os.environ.get("FAILCODE_SHARED_DIR") or REPO.parent / "shared")
"""The shared folder beside the repository (real data read in place, never copied);
``FAILCODE_SHARED_DIR`` points elsewhere (the mutation run tests a copy of the repository)."""
