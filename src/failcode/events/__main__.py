"""``python -m failcode.events schema``: print the event JSON Schema (docs/event.schema.json)."""

from __future__ import annotations

import json
import sys

from failcode.events import event_json_schema

if __name__ == "__main__":
    if sys.argv[1:] != ["schema"]:
        sys.stderr.write("usage: python -m failcode.events schema\n")
        raise SystemExit(2)
    sys.stdout.write(json.dumps(event_json_schema(), indent=2, sort_keys=True) + "\n")
