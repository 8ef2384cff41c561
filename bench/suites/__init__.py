# SPDX-License-Identifier: GPL-2.0
# The benchmark suites bench/runner.py runs, in report order. A suite is one module in
# this directory (see s000_fork_named.py for the interface); adding one is adding the
# file and its name here.
SUITES = [
    "s000_fork_named",
    "s001_refpage",
    "s002_maps_latency",
    "s003_cow_pte",
    "s004_writewatch",
]
