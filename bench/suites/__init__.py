# SPDX-License-Identifier: GPL-2.0
# The benchmark suites bench/runner.py runs, in report order. A suite is one module in
# this directory (see s000_fork_named.py for the interface); adding one is adding the
# file and its name here.
#
# Estimates (each suite's estimate()): seconds measured under TCG with the benchmark
# kernels on the 2-core development machine in a quick run at load 1.4-3.7 (others' work
# beside it). A quiet machine should be faster; none was available to check. The runner
# prints each seed's measured time beside its estimate, and the report keeps both: the
# check for the next calibration.
SUITES = [
    "s000_fork_named",
    "s001_refpage",
    "s002_maps_latency",
    "s003_cow_pte",
    "s004_writewatch",
    "s005_maps_command",
]
