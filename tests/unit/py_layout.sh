#!/bin/bash
# The Python package's structs, constants and reasons match the C headers
# (py_layout.py).
set -euo pipefail
cd "$(dirname "$0")/../.."
exec python3 tests/unit/py_layout.py "${1:-build}"
