# SPDX-License-Identifier: GPL-2.0
"""Unit checks of the test orchestrator (tests/runner.py): kernel target names, the
baseline comparison and the baseline files it writes, on the guest outputs and baselines
in tests/runner-data/ (RESULT and FLAKY lines of a stock and a patched 6.12 run, and a
made-up output with every case of the comparison). Each *.expected file is what
tests/run.sh's shell orchestrator made of the same input. No kernel or guest needed:

    python3 tests/test_runner.py
"""

import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "runner-data")
sys.path.insert(0, HERE)
import runner  # noqa: E402


def data(name):
    with open(os.path.join(DATA, name)) as f:
        return f.read()


def tally(tier, base, out):
    """The tally of tier TIER on base BASE's baselines, as the .expected files have it."""
    said = []
    t = runner.Totals()
    target = runner.Target.parse(tier)
    bl = f"distro-baseline-{base}.txt" if "-distro" in tier else f"baseline-{base}.txt"
    t.tally(tier, data(out), runner.read_baseline(os.path.join(DATA, bl)),
            runner.read_fixed(os.path.join(DATA, f"fixed-{base}.txt")), base,
            stock=target.kernel == "stock", say=said.append)
    lines = said + [f"{t.passed} passed, {t.failed} failed, {t.skipped} skipped"]
    lines += [f"failure: {x}" for x in t.failures] + [f"flaky: {x}" for x in t.flaky]
    return "\n".join(lines) + "\n"


class TallyTest(unittest.TestCase):
    # (tier, base, output): TIER-BASE-OUTPUT.expected
    CASES = [("stock", "6.12", "stock-6.12"), ("patched", "6.12", "patched-6.12"),
             ("patched-cow-all", "6.12", "patched-6.12"), ("stock", "7.3", "stock-6.12"),
             ("patched", "7.3", "patched-6.12"), ("stock", "6.12", "synthetic"),
             ("patched", "6.12", "synthetic"), ("patched", "7.3", "synthetic"),
             ("stock-distro", "6.12", "synthetic"), ("patched-distro", "6.12", "synthetic"),
             ("patched-distro-cow-all", "6.12", "synthetic")]

    def test_recorded_and_made_up_outputs(self):
        for tier, base, out in self.CASES:
            with self.subTest(tier=tier, base=base, out=out):
                self.assertEqual(tally(tier, base, out + ".out"),
                                 data(f"{tier}-{base}-{out}.expected"))

    def test_a_failure_without_failed_cases_counts_one(self):
        t = runner.Totals()
        t.tally("patched", "RESULT x skip 0 0 1\n", {"x": "pass"}, [], "6.12")
        self.assertEqual((t.passed, t.failed, t.skipped), (0, 1, 1))
        self.assertFalse(t.ok())

    def test_fixed_names_match_whole_lines(self):
        fixed = ["# pagemap_scan_rounds: a comment", "pagemap_scan_rounds", "a.b"]
        self.assertTrue(runner.names_fixed("pagemap_scan_rounds", fixed))
        self.assertTrue(runner.names_fixed("mm/pagemap_scan_rounds", fixed))
        self.assertFalse(runner.names_fixed("pagemap_scan", fixed))
        self.assertTrue(runner.names_fixed("axb", ["axb"]))
        self.assertFalse(runner.names_fixed("a+b", ["aab"]))


class SummaryTest(unittest.TestCase):
    def test_format(self):
        t = runner.Totals()
        self.assertEqual(t.summary("lint host", 7),
                         ["", "# tiers lint host took 7s", "0 passed, 0 failed, 0 skipped"])
        t.flaky.append("stock: k failed and passed on a retry")
        t.fail("stock: guest timed out (x)")
        self.assertEqual(t.summary("stock", 1), [
            "", "Flaky (counted as passed, look at them):",
            "  stock: k failed and passed on a retry", "Failures:",
            "  stock: guest timed out (x)", "# tiers stock took 1s",
            "0 passed, 1 failed, 0 skipped"])
        self.assertEqual(t.to_json()["failures"], ["stock: guest timed out (x)"])


class GuestVerdictTest(unittest.TestCase):
    def test_verdicts(self):
        with tempfile.TemporaryDirectory() as d:
            res = "RESULT a pass 1 0 0\n"
            self.assertIsNone(runner.guest_verdict(0, res, d))
            self.assertIsNone(runner.guest_verdict(1, res, d))
            with open(os.path.join(d, "splats.log"), "w") as f:
                f.write("BUG: x\n")
            self.assertEqual(runner.guest_verdict(1, res, d),
                             f"kernel splat in dmesg ({d}/splats.log)")
            self.assertEqual(runner.guest_verdict(124, res, d),
                             f"guest timed out ({d}/console.log)")
            self.assertIn("without reporting a status", runner.guest_verdict(125, res, d))
            self.assertEqual(runner.guest_verdict(3, "TAP\n", d),
                             f"guest run produced no results (exit 3; {d}/console.log)")


class BaselineFilesTest(unittest.TestCase):
    def test_selftests_baseline(self):
        self.assertEqual(runner.selftests_baseline(data("stock-6.12.out"),
                                                   data("selftests.list"), "6.12",
                                                   "6.12.117-1~deb12u1"),
                         data("selftests-baseline-6.12.expected"))

    def test_distro_baseline_keeps_what_a_partial_run_lacks(self):
        self.assertEqual(runner.distro_baseline(data("synthetic.out"),
                                                data("distro-baseline-6.12.txt"), "6.12",
                                                "6.12.117-1~deb12u1"),
                         data("distro-baseline-6.12-synthetic.expected"))

    def test_skip_list(self):
        self.assertEqual(runner.skip_filtered(data("selftests.list"), data("skip-7.3.txt")),
                         data("selftests-7.3.list.expected"))


class TargetTest(unittest.TestCase):
    def test_names(self):
        for name, tier in [("stock", "stock"), ("patched-debug", "patched"),
                           ("7.3/patched", "patched"), ("patched-distro", "patched-distro"),
                           ("patched-distro-cow-all-debug", "patched-distro-cow-all"),
                           ("patched-cow-all", "patched-cow-all")]:
            t = runner.Target.parse(name)
            self.assertEqual((str(t), t.tier), (name, tier))
        for name in ("lint", "stock-cow-all", "patched-debug-distro", "7.3/", "patch"):
            self.assertIsNone(runner.Target.parse(name), name)

    def test_defaults_and_environment(self):
        t = runner.Target.parse("stock-distro", base="6.12", debug=True)
        self.assertEqual(str(t), "6.12/stock-distro-debug")
        env = t.env({"DISTRO": "0", "PATH": "/bin"})
        self.assertEqual((env["MMEXT_BASE"], env["DISTRO"], env["DEBUG"], env["PATH"]),
                         ("6.12", "1", "1", "/bin"))
        self.assertEqual(runner.Target.parse("7.3/stock", base="6.12").base, "7.3")

    def test_tiers(self):
        self.assertEqual(runner.expand_tiers(" lint distro  stock"),
                         ["lint", "stock-distro", "patched-distro",
                          "patched-distro-cow-all", "stock"])
        for t in runner.DEFAULT_TIERS.split() + ["mainline", "kcsan", "syzkaller", "installed",
                                                 "patched-cow-all", "patched-distro-cow-all"]:
            self.assertTrue(runner.is_tier(t), t)
        self.assertFalse(runner.is_tier("hosts"))


# A tree with the orchestrator, scripts/lib.sh and the bases' baselines, whose deps.sh,
# kernel.sh, vm.sh and Makefiles only pretend: vm.sh's guest gives the output and exit
# status runner-data/fake-guests.txt has for it, kernel.sh fails to build the distro
# kernel FAKE_BUILD_FAILS names.
FAKE_SCRIPTS = {
    "scripts/deps.sh": "#!/bin/sh\nexit 0\n",
    "scripts/kernel.sh": """#!/usr/bin/env bash
. "$(dirname "$0")/lib.sh"
echo "kernel.sh $* (base $MMEXT_BASE, DISTRO=${DISTRO:-0} DEBUG=${DEBUG:-0})" >> "$FAKE_CALLS"
case $1 in
build) [ "$2${DISTRO:+-distro}" = "${FAKE_BUILD_FAILS:-none}-distro" ] && [ "$DISTRO" = 1 ] &&
	{ echo "no $2-distro"; exit 2; } ;;
selftests) mkdir -p "$KOUT/kselftest" ;;
esac
exit 0
""",
    "scripts/vm.sh": """#!/usr/bin/env bash
args="$*"
while [ $# -gt 0 ]; do case $1 in -l) log=$2; shift ;; --) break ;; esac; shift; done
. "$(dirname "$0")/lib.sh"
echo "vm.sh $args (base $MMEXT_BASE, DISTRO=${DISTRO:-0} DEBUG=${DEBUG:-0})" |
	tr -s ' \\t\\n' ' ' >> "$FAKE_CALLS"; echo >> "$FAKE_CALLS"
read -r _ out rc < <(grep "^$MMEXT_BASE-${log##*/vm-} " "$FAKE_DATA/fake-guests.txt")
mkdir -p "$log"
cp "$FAKE_DATA/${out:-none}" "$log/output.log" 2>/dev/null || : > "$log/output.log"
exit "${rc:-0}"
""",
    "tests/kcsan/run.sh": "#!/bin/sh\necho kcsan: no kernel\nexit 1\n",
    "tests/syzkaller/run.sh": "#!/bin/sh\necho RESULT syzkaller-crashes fail 0 1 0 >&2\n"
                              "echo RESULT syzkaller-run pass 1 0 0\nexit 1\n",
    "tests/Makefile": "all:\n",
    "examples/Makefile": "all:\n",
}
FAKE_COPIES = ["scripts/lib.sh", "tests/run.sh", "tests/runner.py", "kernel/6.12/base.conf",
               "kernel/7.3/base.conf"]
# The fake tree's files from runner-data/.
FAKE_DATA = {"tests/selftests.list": "selftests.list",
             "kernel/6.12/selftests-baseline.txt": "baseline-6.12.txt",
             "kernel/6.12/selftests-fixed.txt": "fixed-6.12.txt",
             "kernel/6.12/distro-baseline.txt": "distro-baseline-6.12.txt",
             "kernel/7.3/selftests-baseline.txt": "baseline-7.3.txt",
             "kernel/7.3/selftests-fixed.txt": "fixed-7.3.txt",
             "kernel/7.3/selftests-skip.txt": "skip-7.3.txt"}
FAKE_TIERS = "stock patched patched-cow-all mainline stock-distro patched-distro"


def fake_tree(root, run_sh=None):
    """A fake tree in ROOT; RUN_SH replaces tests/run.sh."""
    def put(rel, text, mode=0o644):
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, mode)
    top = os.path.dirname(HERE)
    for rel, text in FAKE_SCRIPTS.items():
        put(rel, text, 0o755)
    for rel in FAKE_COPIES:
        src = run_sh if rel == "tests/run.sh" and run_sh else os.path.join(top, rel)
        with open(src) as f:
            put(rel, f.read(), 0o755)
    for rel, name in FAKE_DATA.items():
        put(rel, data(name))


def fake_run(root, args=("--tiers", FAKE_TIERS), **env_vars):
    """tests/run.sh ARGS in the fake tree, with ENV_VARS: its output, then the
    calls of kernel.sh and vm.sh, and its exit status, with the tree's path as ROOT and
    durations as N."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("MMEXT_BASE", "DEBUG", "DISTRO", "DISTRO_PARTS")}
    calls = os.path.join(root, "calls.log")
    env.update(MMEXT_BUILD=os.path.join(root, "build"), FAKE_DATA=DATA,
               FAKE_BUILD_FAILS="patched", FAKE_CALLS=calls, **env_vars)
    open(calls, "w").close()
    p = subprocess.run([os.path.join(root, "tests", "run.sh"), *args], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with open(calls) as f:
        text = (p.stdout + "\n--- calls\n" + f.read()).replace(root, "ROOT")
    text = re.sub(r"(### tier \S+: |took )\d+s", r"\1Ns", text)
    return text, p.returncode


class FakeTreeTest(unittest.TestCase):
    """The guest tiers end to end with pretend guests: the same output and status as
    tests/run.sh's shell orchestrator (fake-run.expected)."""

    def test_guest_tiers(self):
        with tempfile.TemporaryDirectory() as root:
            fake_tree(root)
            text, rc = fake_run(root)
        self.assertEqual(rc, 1)
        self.assertEqual(text, data("fake-run.expected"))

    def test_debug_and_update_baseline(self):
        with tempfile.TemporaryDirectory() as root:
            fake_tree(root)
            text, rc = fake_run(root, ("--tiers", "stock patched", "--update-baseline"),
                                DEBUG="1")
            with open(os.path.join(root, "kernel", "6.12", "selftests-baseline.txt")) as f:
                text += "--- selftests-baseline.txt\n" + f.read()
        self.assertEqual(rc, 1)
        self.assertEqual(text, data("fake-run-debug.expected"))

    def test_own_runners_and_no_distro_parts(self):
        with tempfile.TemporaryDirectory() as root:
            fake_tree(root)
            text, rc = fake_run(root, ("--tiers", "kcsan syzkaller distro"), DISTRO_PARTS=" ")
        self.assertEqual(rc, 1)
        self.assertEqual(text, data("fake-run-own.expected"))

    def test_base_option_reaches_every_script(self):
        # --base alone, as MMEXT_BASE's environment does: the setup's prepare and
        # selftests build the base's tree, not the default's.
        with tempfile.TemporaryDirectory() as root:
            fake_tree(root)
            text, rc = fake_run(root, ("--base", "7.3", "--tiers", "stock patched"))
        calls = [c for c in text.split("--- calls\n")[1].splitlines()
                 if c.startswith("kernel.sh")]
        self.assertIn("kernel.sh selftests (base 7.3, DISTRO=0 DEBUG=0)", calls)
        self.assertEqual([c for c in calls if "(base 7.3," not in c], [])

    def test_list_runs_nothing(self):
        with tempfile.TemporaryDirectory() as root:
            fake_tree(root)
            text, rc = fake_run(root, ("--list", "--tiers", "lint mainline distro"), DEBUG="1")
            self.assertFalse(os.path.exists(os.path.join(root, "build")))
        self.assertEqual((rc, text), (0, "lint\nmainline\t7.3/stock-debug 7.3/patched-debug\n"
                                      "stock-distro\t6.12/stock-distro-debug\n"
                                      "patched-distro\t6.12/patched-distro-debug\n"
                                      "patched-distro-cow-all\t6.12/patched-distro-cow-all-debug"
                                      "\n\n--- calls\n"))


if __name__ == "__main__":
    unittest.main()
