#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Run every feature's benchmarks: host, stock 6.12 and patched 6.12, one report in
# build/report/. Its options are bench/runner.py's: `bench/run.sh --help` lists them;
# `bench/run.sh --report-only --write-docs` puts the goals tables of a full run's results
# into docs/results (docs/benchmarks.md).
#
# The work is in bench/runner.py (the report needs Python and matplotlib anyway); this
# wrapper keeps the command the README shows. Debian's python3, whose matplotlib
# scripts/deps.sh installs, not whichever python3 comes first in PATH.
set -euo pipefail
exec "${PYTHON:-/usr/bin/python3}" "$(dirname "$0")/runner.py" "$@"
