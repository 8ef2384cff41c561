#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The test command: build stock and patched 6.12 and everything the tests need, then run
#   lint    mandoc on the man pages, checkpatch.pl on the kernel queue, the benchmark
#           runner's unit checks (tests/lint.sh)
#   host    the feature tests on the running kernel (SKIPs where it lacks a feature),
#           and tests/host.list (make install, building against the installed tree,
#           the Debian packages, the library's ABI against the last release's)
#   host-asan  the same, built with AddressSanitizer and UBSan
#   fuzz    the maps parser's libFuzzer target for FUZZ_SECONDS (tests/fuzz/Makefile)
#   stock   the feature tests and the mm/proc selftest subset in a stock 6.12 guest
#   patched the same in a guest running 6.12 with our queue
#   patched-cow-all  (not run by default) the selftest subset in the patched guest with
#           COW page tables forced on for every fork (/sys/kernel/mm/cow_pte/force_all)
#   mainline  (not run by default) stock and patched on each mainline base (its base.conf
#           says MMEXT_BASE_MAINLINE=1: 7.3): the same as "tests/run.sh --base 7.3", whose
#           default tiers are stock and patched
#   kcsan   (not run by default) the data-race detector's kernels running the features'
#           selftests and stress under force_all, on 2 and 4 vCPUs (tests/kcsan/run.sh)
#   syzkaller  (not run by default) syzkaller on the patched fuzzing kernel for
#           SYZ_SECONDS, then a summary with coverage (tests/syzkaller/run.sh)
#   distro  (not by default) Debian-config kernels through tests/distro/guest.sh;
#           DISTRO_PARTS runs part of it, DISTRO_VM_CPUS sets its guests' vCPUs
#           (4: migration's tests want 3 or more); guest.sh's variables
#           (VMTESTS_CATEGORIES, VMTESTS_TIMEOUT, STRESS_SECONDS, TRINITY_SECONDS,
#           UAPI_FUZZ_SECONDS) reach the guest
#   installed  (not by default) the kernel's and the library's Debian packages installed
#           with apt in a Debian 12 root, booted with systemd, checked, then purged
#           (tests/installed/run.sh; DEB_CONFIG=test packages the test configuration)
# A selftest that passes in selftests-baseline.txt (stock's results) must pass everywhere;
# one that fails there too is reported as a known failure and counted as skipped, unless
# selftests-fixed.txt names it: a stock bug our queue fixes, so it must pass on patched,
# and its failures on stock (even intermittent ones) count as skipped.
# Any kernel splat in a guest fails that tier. Ends with the run's duration and
# "N passed, N failed, N skipped".
#
#   tests/run.sh [--base 6.12|7.3] [--tiers "lint host host-asan fuzz stock patched"]
#                [--update-baseline] [--list]
# --base (or MMEXT_BASE) sets the kernel of the stock and patched tiers (default: the base
# whose base.conf says MMEXT_BASE_DEFAULT=1, 6.12); each base has its own baselines
# (kernel/<base>/). DEBUG=1 uses the KASAN/kmemleak builds for the guest tiers.
# A guest tier is also a kernel target, [BASE/]stock|patched[-distro][-cow-all][-debug]:
# --tiers "7.3/stock patched-debug" is --base 7.3 with stock, then DEBUG=1's patched.
# --list prints each tier and the target it boots, and runs nothing.
# How long each tier takes: docs/results/run-times.md.
# The orchestration is tests/runner.py; the kernels and guests are scripts/kernel.sh's
# and scripts/vm.sh's.
exec "${PYTHON:-/usr/bin/python3}" "$(dirname "$0")/runner.py" "$@"
