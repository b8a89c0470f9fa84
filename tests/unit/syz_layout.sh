#!/bin/bash
# The syzkaller description matches the UAPI header (syz_layout.py).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
exec python3 tests/unit/syz_layout.py "$BUILD"
