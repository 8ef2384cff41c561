# SPDX-License-Identifier: GPL-2.0
# The benchmark suites bench/runner.py runs, in report order: one module per feature in
# this directory, named by its feature key (see anon_names.py for the interface);
# adding one is adding the file and its name here.
#
# Estimates (each suite's estimate()): seconds measured under TCG with the benchmark
# kernels on a 2-core machine in a quick run at load 1.4-3.7 (others' work beside it),
# so a quiet machine takes less. The runner prints each suite's measured time beside
# its estimate, and the report keeps both: the check for the next calibration.
SUITES = [
    "anon_names",
    "refpage",
    "lockless_maps",
    "cow_pte",
    "write_tracking",
    "maps_command",
    "real_programs",
]
