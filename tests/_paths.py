"""Where the tests find the repository, their own fixtures and the shared data folder."""
from pathlib import Path

TESTS = Path(__file__).resolve().parent
"""The tests folder: fixtures/ and golden/ live here, whatever layer folder a test is in."""
REPO = TESTS.parent
"""The repository root."""
SHARED = REPO.parent / "shared"
"""The shared folder beside the repository (real data read in place, never copied)."""
