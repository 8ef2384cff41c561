#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Run every feature's benchmarks: host, stock 6.12 and patched 6.12, one report.
#
#   bench/run.sh [--quick] [--only SUITE,...] [--targets host,stock,patched] [--out DIR]
#                [--no-build]
#   SUITE: a feature key, one of bench/suites/__init__.py's SUITES (anon_names, refpage,
#   lockless_maps, cow_pte, write_tracking, maps_command)
#   bench/run.sh --compare A/results.json B/results.json
#   bench/run.sh --report-only [--out DIR]     (report.md again from DIR/results.json)
#
# The work is in bench/runner.py (the report needs Python and matplotlib anyway); this
# wrapper keeps the command the README shows. Debian's python3, whose matplotlib
# scripts/deps.sh installs, not whichever python3 comes first in PATH.
set -euo pipefail
exec "${PYTHON:-/usr/bin/python3}" "$(dirname "$0")/runner.py" "$@"
