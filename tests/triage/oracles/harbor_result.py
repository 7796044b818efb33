"""Read Harbor trial results with Harbor's own models and error policy; print JSON.

Run with the Python of the ``harbor`` oracle environment (``tests/lab/oracles.toml``), never
with failcode's: it imports only Harbor's models and the standard library.

    python harbor_result.py FILE...

Prints ``{"policy": [...], "results": [...]}``: the exception types after which Harbor's
``ErrorPolicy.reward_valid`` holds (``harbor.models.trial.error_policy.ERROR_POLICIES``), and
per file its ``TrialResult`` as Harbor validates it: ``reward_valid``, the verifier's
``rewards`` and the trial's exception type.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from harbor.models.trial.error_policy import ERROR_POLICIES
from harbor.models.trial.result import TrialResult


def main(paths: list[str]) -> None:
    results = []
    for path in paths:
        trial = TrialResult.model_validate_json(Path(path).read_text(encoding="utf-8"))
        verifier = trial.verifier_result
        info = trial.exception_info
        results.append({
            "path": path,
            "trial_name": trial.trial_name,
            "reward_valid": trial.reward_valid,
            "rewards": verifier.rewards if verifier is not None else None,
            "exception_type": info.exception_type if info is not None else None,
        })
    policy = sorted(name for name, rule in ERROR_POLICIES.items() if rule.reward_valid)
    json.dump({"policy": policy, "results": results}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
