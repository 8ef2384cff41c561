# SPDX-License-Identifier: GPL-2.0
"""Unit checks of the benchmark runner (bench/runner.py), its paired statistics, the
reports of the anon_names, lockless_maps, cow_pte and real_programs suites, the goals
of write_tracking and maps_command, and --write-docs. No kernel, guest or benchmark run
needed. The lint tier runs them (tests/lint.sh); by hand:
/usr/bin/python3 tests/bench/test_runner.py"""

import contextlib
import io
import json
import math
import os
import random
import sys
import tempfile
import unittest
import unittest.mock

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "bench")
sys.path.insert(0, BENCH)
import pairstats  # noqa: E402
import runner  # noqa: E402
from suites import SUITES, anon_names, cow_pte, lockless_maps  # noqa: E402
from suites import maps_command, real_programs, write_tracking  # noqa: E402
import importlib  # noqa: E402


def crossover(effect, bias, pairs, sigma, rng, drift=0.0):
    """fork_named's design, simulated: per round, per pair, (unnamed, named) times. The
    first process is slower by `bias` and plays unnamed in round 0, named in round 1;
    `drift` scales both forks of pair i by 1 + drift * i (a machine slowing down)."""
    a, b = [], []
    for rnd in range(2):
        for i in range(pairs):
            d = 1 + drift * (rnd * pairs + i)
            u = 10 * d * (bias if rnd == 0 else 1) * math.exp(rng.gauss(0, sigma))
            n = 10 * d * effect * (bias if rnd == 1 else 1) * math.exp(rng.gauss(0, sigma))
            a.append(u)
            b.append(n)
    return a, b, [pairs, pairs]


class PairStats(unittest.TestCase):
    def test_bad_input(self):
        with self.assertRaises(ValueError):
            pairstats.ratios([1, 2], [1])
        with self.assertRaises(ValueError):
            pairstats.ratios([0, 2], [1, 1])
        with self.assertRaises(ValueError):
            pairstats.regression([1] * 20, [1] * 20, [10, 9])

    def test_estimate(self):
        self.assertAlmostEqual(pairstats.estimate([[1.0, 1.2, 1.1]]), 1.1)
        # Geometric mean of the rounds' medians, whatever their sizes.
        self.assertAlmostEqual(pairstats.estimate([[1.1] * 3, [0.9] * 30]),
                               math.sqrt(1.1 * 0.9))

    def test_process_bias_and_drift_cancel(self):
        rng = random.Random(1)
        # A process 6% slower than the other and a machine slowing down 50% over the
        # run: a single round reads +11%, the design reads the true +5%.
        a, b, rp = crossover(1.05, 1.06, 60, 0.01, rng, drift=0.5 / 120)
        reg = pairstats.regression(a, b, rp)
        self.assertAlmostEqual(reg["pct"], 5.0, delta=0.5)
        self.assertLess(reg["lo"], 5.0)
        self.assertGreater(reg["hi"], 5.0)
        one = pairstats.regression(a[:60], b[:60])
        self.assertLess(one["pct"], 0)  # bias 1/1.06 in round 0 alone

    def test_interval_covers(self):
        # A/A with noisy forks: the 95% interval must hold 0 in most runs, not all.
        rng = random.Random(2)
        hits = 0
        trials = 120
        for _ in range(trials):
            a, b, rp = crossover(1.0, 1.03, 30, 0.1, rng)
            reg = pairstats.regression(a, b, rp, resamples=800, seed=rng.random())
            hits += reg["lo"] <= 0 <= reg["hi"]
        self.assertGreater(hits / trials, 0.85)
        self.assertLess(hits / trials, 1.0)

    def test_seeded(self):
        a, b, rp = crossover(1.02, 1.0, 20, 0.05, random.Random(3))
        self.assertEqual(pairstats.regression(a, b, rp), pairstats.regression(a, b, rp))

    def test_verdict(self):
        v = pairstats.verdict
        self.assertEqual(v({"pct": 2, "lo": 1, "hi": 5, "pairs": 40}, 5.4), "met")
        self.assertEqual(v({"pct": 9, "lo": 6, "hi": 12, "pairs": 40}, 5.4), "NOT met")
        self.assertEqual(v({"pct": 5, "lo": 3, "hi": 7, "pairs": 40}, 5.4), "not resolved")
        self.assertEqual(v({"pct": 1, "lo": None, "hi": None, "pairs": 6}, 5.4),
                         "not resolved")
        self.assertEqual(v(None, 5.4), "not measured")
        self.assertIsNone(pairstats.regression([1.0] * 18, [1.0] * 18, [9, 9])["lo"])


def fork_records(target, effect, sigma, seed, pairs=40, aa=False):
    """What bench/fork_named prints for each 64,000-VMA scenario, as the runner keeps it."""
    rng, recs = random.Random(seed), []
    for p, _ in anon_names.SCENARIOS:
        a, b, rp = crossover(effect, 1.02, pairs, sigma, rng)
        common = dict(target=target, suite="anon_names", bench="fork_named", group="fork",
                      vmas=64000, pages=p)
        for case, v in (("unnamed", a), ("unnamed-b" if aa else "named", b)):
            srt = sorted(v)
            recs.append(dict(common, case=case, backend="fork", unit="ms",
                             mean=sum(v) / len(v), median=srt[len(v) // 2],
                             p10=srt[len(v) // 10], p90=srt[-1 - len(v) // 10],
                             runs=len(v)))
        recs.append(dict(common, case="regression", aa=int(aa), a=a, b=b, round_pairs=rp))
    return recs


class SuiteReport(unittest.TestCase):
    """A suite's report() on made-up records; SUITE is the module under test."""
    SUITE = None

    def render(self, records, mode="full"):
        meta = {"mode": mode, "host": {"kernel": "test"}}
        with tempfile.TemporaryDirectory() as d:
            return self.SUITE.report(runner.Context(d, meta, records, self.SUITE.KEY))


class AnonNamesReport(SuiteReport):
    SUITE = anon_names

    def goal_line(self, md):
        return [line for line in md.splitlines() if line.startswith("Goal ")][0]

    def test_met(self):
        md = self.render(fork_records("stock", 1.01, 0.02, 1)
                         + fork_records("patched", 1.01, 0.02, 2))
        self.assertIn("Goal met in every measured kernel and scenario", md)

    def test_not_met(self):
        md = self.render(fork_records("stock", 1.30, 0.02, 3)
                         + fork_records("patched", 1.30, 0.02, 4))
        self.assertIn("**NOT met** in 6 of 6", self.goal_line(md))

    def test_not_resolved(self):
        md = self.render(fork_records("stock", 1.06, 0.3, 5)
                         + fork_records("patched", 1.06, 0.3, 6))
        self.assertIn("not resolved", self.goal_line(md))

    def test_aa_is_not_a_verdict(self):
        md = self.render(fork_records("host", 1.0, 0.02, 7, aa=True)
                         + fork_records("stock", 1.0, 0.02, 8, aa=True))
        self.assertIn("A/A run", md)
        self.assertNotIn("Goal met", md)

    def test_old_results(self):
        # results.json from before the paired design: no pairs, no interval, no verdict.
        recs = [r for r in fork_records("stock", 1.01, 0.02, 9) if r["case"] != "regression"]
        md = self.render(recs)
        self.assertIn("not resolved", self.goal_line(md))


def maps_records(target, block_us, floor_block_us, runs=20, seed=1, schedstats=True,
                 unc_median=12.0):
    """maps_latency's records: wall-clock maxima of 10-20 ms everywhere (the TCG floor),
    blocked maxima around block_us (contended) and floor_block_us (nobody reading)."""
    rng = random.Random(seed)
    recs = [dict(target=target, suite="lockless_maps", group="maps_latency",
                 case="mmap/munmap op uncontended", median=unc_median, runs=1000)]

    def blk(mean):
        if not schedstats:
            return {}
        m = mean * rng.uniform(0.5, 1.5) if mean else 0.0
        return dict(block_max_us=m, block_sum_us=3 * m, sleep_sum_us=3 * m, wait_max_us=5.0,
                    wait_sum_us=50.0, sleeps=3 if m else 0)
    for i in range(runs // 5):
        recs.append(dict(target=target, suite="lockless_maps", group="maps_latency",
                         case="uncontended run", run=i, ops=50000,
                         max_us=rng.uniform(9e3, 22e3), **blk(floor_block_us)))
    for i in range(runs):
        recs.append(dict(target=target, suite="lockless_maps", group="maps_latency", case="run",
                         run=i, ops=40000, max_us=rng.uniform(1e4, 2e4), mean_us=20.0,
                         scanner_reads=5000, scanners=2, seconds=2.0, **blk(block_us)))
    recs.append(dict(target=target, suite="lockless_maps", group="maps_latency",
                     case="mmap/munmap op", median=30.0, p99=3000.0, p999=1e4, runs=runs))
    if schedstats:
        recs.append(dict(target=target, suite="lockless_maps", group="maps_latency",
                         case="schedstats", ttwu_queue=1, delay_dequeue=1))
    return recs


class LocklessMapsReport(SuiteReport):
    SUITE = lockless_maps

    def test_verdicts(self):
        stock = [800.0] * 90 + [100.0] * 10
        floor = [0.0] * 40
        v = lockless_maps.blocked_verdict
        self.assertEqual(v(stock, [50.0] * 100, floor, 500)[0], "met")
        self.assertEqual(v(stock, [50.0] * 97 + [900.0] * 3, floor, 500)[0], "not met")
        # Stock not mostly above the threshold: the goal's premise is not there.
        self.assertEqual(v(stock, [50.0] * 100, floor, 1000)[0], "not resolved")
        # The floor above the threshold: the metric sees more than the readers.
        self.assertEqual(v(stock, [50.0] * 100, [0.0] * 38 + [600.0] * 2, 500)[0],
                         "not resolved")
        self.assertEqual(v(stock, [], floor, 500)[0], "not resolved")

    def test_report_met(self):
        md = self.render(maps_records("stock", 2000.0, 0.0, seed=1)
                         + maps_records("patched", 20.0, 0.0, seed=2))
        self.assertIn("**Blocked time**", md)
        self.assertIn("- 0.5 ms: **met**", md)
        self.assertIn("| stock, nobody reading | 4 | 0% |", md)
        self.assertIn("`TTWU_QUEUE` on (the default, as here)", md)

    def test_scaled_thresholds(self):
        # Upstream's patched median is 10 us: scale only when this machine is off by half.
        for unc, want in ((12.0, None), (4.0, "0.20 ms and 0.40 ms"),
                          (30.0, "1.50 ms and 3.00 ms")):
            md = self.render(maps_records("stock", 2000.0, 0.0, seed=1, unc_median=unc)
                             + maps_records("patched", 20.0, 0.0, seed=2, unc_median=unc))
            if want:
                self.assertIn(f"scale to {want}", md)
                self.assertIn("blocked max > 0.2 ms" if unc < 10 else "blocked max > 1.5 ms",
                              md)
            else:
                self.assertIn("close enough to keep upstream's 0.5 ms", md)
                self.assertNotIn("Scaled thresholds", md)

    def test_report_fallbacks(self):
        recs = maps_records("stock", 2000.0, 0.0, seed=7) + maps_records("patched", 20.0, 0.0,
                                                                          seed=8)
        for r in recs:
            if r["target"] == "patched" and r["case"] == "run":
                r["fallbacks"] = 2 * r["sleeps"] + r["run"] % 2
                r["queued"] = r["sleeps"] // 2 + r["run"] % 2
                r["sleeps"] += r["run"] % 3
        md = self.render(recs)
        self.assertIn("fell back to `mmap_lock`: correlation", md)
        self.assertIn("queued on `mmap_lock` after waiting for the writer: correlation", md)

    def test_report_floor_fails(self):
        # Something other than the readers blocks the mapper: no verdict from this metric.
        md = self.render(maps_records("stock", 2000.0, 2000.0, seed=3)
                         + maps_records("patched", 20.0, 2000.0, seed=4))
        self.assertIn("- 0.5 ms: **not resolved**", md)
        self.assertNotIn("**met**", md)

    def test_report_without_schedstats(self):
        md = self.render(maps_records("stock", 0, 0, seed=5, schedstats=False)
                         + maps_records("patched", 0, 0, seed=6, schedstats=False))
        self.assertIn("Blocked time: not measured", md)
        self.assertIn("| stock | 20 |", md)

    def test_guest_runs_ask_for_schedstats(self):
        for mode in ("quick", "full"):
            self.assertIn("--schedstats", lockless_maps.runs(mode, "stock")[0][1])
            self.assertNotIn("--schedstats", lockless_maps.runs(mode, "host")[0][1])


def pair_record(suite, group, backend, a, ratio, sigma, n, rng_key, **kw):
    """A pair record of n pairs: a around `a`, b around a * ratio, log-normal noise."""
    rng = random.Random(rng_key)
    xs = [a * math.exp(rng.gauss(0, sigma)) for _ in range(n)]
    return dict(target="host", suite=suite, group=group, case="regression", backend=backend,
                a=xs, b=[x * ratio * math.exp(rng.gauss(0, sigma)) for x in xs], **kw)


class WriteTrackingGoals(unittest.TestCase):
    KEY = write_tracking.KEY

    def rows(self, records):
        with tempfile.TemporaryDirectory() as d:
            ctx = runner.Context(d, {"mode": "quick"}, records, self.KEY)
            return write_tracking.goal_rows(ctx, "host")

    def test_verdicts(self):
        recs = [pair_record(self.KEY, "writewatch", "pagemap_scan/mprotect", 500, 1 / 14,
                            0.05, 21, 1),
                pair_record(self.KEY, "writewatch", "pagemap_scan/soft_dirty", 100, 1 / 2,
                            0.05, 21, 2),
                # Pair ratios 0.8 and 1.6 around 1.2: an interval across the goal.
                dict(target="host", suite=self.KEY, group="writewatch", case="regression",
                     backend="pagemap_scan/bare_walks", a=[40.0] * 11,
                     b=[32.0, 64.0] * 5 + [48.0]),
                dict(target="host", suite=self.KEY, group="writewatch_goal",
                     case="bare_walks", backend="pagemap_scan", median=40.0)]
        mprot, sd, floor = self.rows(recs)
        self.assertIn("**met**", mprot)
        self.assertIn("**NOT met**", sd)
        self.assertIn("**not resolved**", floor)
        self.assertIn("floor, two bare walks: 40.0 µs", floor)

    def test_unavailable(self):
        recs = [dict(target="host", suite=self.KEY, bench="writewatch", case="unavailable",
                     backend="soft_dirty", detail="no CONFIG_MEM_SOFT_DIRTY")]
        self.assertIn("soft_dirty unavailable: no CONFIG_MEM_SOFT_DIRTY", self.rows(recs)[1])


class MapsCommandReport(unittest.TestCase):
    KEY = maps_command.KEY

    def test_goals(self):
        info = dict(vmas=60025, mmext_lines=60028, pmap_lines=60027, procmap_query=True)
        recs = [pair_record(self.KEY, "maps_command", "mmext/pmap", 150, 1 / 7, 0.05, 10, 4,
                            **info),
                pair_record(self.KEY, "maps_command", "mmext/read", 35, 1.8, 0.05, 10, 5,
                            **info)]
        recs += [dict(target="host", suite=self.KEY, group="maps_command", case=c,
                      backend=b, median=m, **info)
                 for c, b, m in (("cpu mmext maps", "mmext", 21.0), ("cpu pmap", "pmap", 150.0),
                                 ("wall mmext maps", "mmext", 63.0),
                                 ("wall read(2) pass", "read", 35.0))]
        with tempfile.TemporaryDirectory() as d:
            md = maps_command.report(runner.Context(d, {"mode": "quick"}, recs, self.KEY))
        cpu, wall = [line for line in md.splitlines() if line.startswith("| host | ")][1:]
        self.assertIn("**met**", cpu)
        self.assertIn("pmap CPU: 150.0 ms", cpu)
        self.assertIn("**NOT met**", wall)
        self.assertIn("floor, read(2) pass wall: 35.0 ms", wall)
        self.assertIn("| host | 60,025 | yes | 60,028 | 60,027 |", md)

    def test_quick_is_host_only(self):
        self.assertTrue(maps_command.runs("quick", "host"))
        self.assertEqual(maps_command.runs("quick", "stock"), [])
        self.assertEqual(maps_command.estimate("quick", "patched"), 0)


def cow_records(ratios, pairs=12, sigma=0.05, rng_seed=3, reclaimed=(256.0, 256.0),
                swing=None):
    """The cow_pte suite's records: for each measure, pairs of plain and COW values whose
    ratio is ratios[measure] with lognormal noise (or, with swing, that many times above
    and below it in turn); plus the reclaim case's MiB."""
    rng = random.Random(rng_seed)
    recs = []
    for measure, mb in (("fork", 1024), ("vmpte-child", 1024), ("fault-seq", 512),
                        ("server", 1024), ("reclaim", 256), ("reclaim-held", 256),
                        ("migrate", 256)):
        a = [100 * math.exp(rng.gauss(0, sigma)) for _ in range(pairs)]
        b = [x * ratios[measure] * (swing ** (1 if i % 2 else -1) if swing else
                                    math.exp(rng.gauss(0, sigma))) for i, x in enumerate(a)]
        recs.append(dict(target="patched", suite="cow_pte", group="pairs", case="regression",
                         measure=measure, mb=mb, backend="cow_pte", a=a, b=b))
    for backend, mib in zip(("plain", "cow_pte"), reclaimed):
        for group in ("reclaimed", "reclaimed-held"):
            recs.append(dict(target="patched", suite="cow_pte", group=group, case="256 MiB",
                             backend=backend, mb=256, children=16, median=mib, min=mib,
                             max=mib, runs=pairs))
    return recs


class CowPteReport(SuiteReport):
    SUITE = cow_pte
    GOOD = {"fork": 0.01, "vmpte-child": 0.02, "fault-seq": 1.0, "server": 20.0,
            "reclaim": 1.0, "reclaim-held": 1.0, "migrate": 1.0}
    GOALS = len(cow_pte.GOALS)

    def verdicts(self, md):
        rows = md.split("| goal |")[1].splitlines()[2:2 + self.GOALS]
        return [r.rsplit("|", 2)[1].strip() for r in rows]

    def test_met(self):
        self.assertEqual(self.verdicts(self.render(cow_records(self.GOOD))),
                         ["met"] * self.GOALS)

    def test_not_met(self):
        bad = {"fork": 0.2, "vmpte-child": 0.5, "fault-seq": 1.5, "server": 4.0,
               "reclaim": 2.0, "reclaim-held": 2.0, "migrate": 2.0}
        self.assertEqual(self.verdicts(self.render(cow_records(bad))),
                         ["**NOT met**"] * self.GOALS)

    def test_straddles_or_too_few(self):
        edge = {"fork": 0.02, "vmpte-child": 0.05, "fault-seq": 1.15, "server": 10.0,
                "reclaim": 1.2, "reclaim-held": 1.2, "migrate": 1.2}
        self.assertEqual(self.verdicts(self.render(cow_records(edge, swing=1.3))),
                         ["not resolved"] * self.GOALS)
        self.assertEqual(self.verdicts(self.render(cow_records(self.GOOD, pairs=2))),
                         ["not resolved"] * self.GOALS)

    def test_goal_takes_the_most_pairs(self):
        recs = cow_records(self.GOOD)
        recs.append(dict(target="patched", suite="cow_pte", group="pairs", case="regression",
                         measure="vmpte-child", mb=1024, backend="cow_pte", a=[2096] * 3,
                         b=[48] * 3))
        self.assertEqual(self.verdicts(self.render(recs))[1], "met")

    def test_reclaim_must_give_back(self):
        v = self.verdicts(self.render(cow_records(self.GOOD, reclaimed=(256.0, 10.0))))
        self.assertTrue(v[4].startswith("**NOT met**: COW gave back 10.0 MiB"), v[4])
        self.assertTrue(v[5].startswith("**NOT met**: COW gave back 10.0 MiB"), v[5])

    def test_quick_plan_is_shorter(self):
        self.assertLess(cow_pte.estimate("quick", "patched"), 45)


def real_records(ratio, pairs=1, same=True):
    """real_programs records: plain medians of 1 and COW medians of ratio[group]; execs
    plain 10. pairs > 1 adds paired records with that many pairs."""
    recs = []
    for g, r in ratio.items():
        base = 10.0 if g == "execs" else 1.0
        for backend, v in (("plain", base), ("cow_pte", base * r)):
            recs.append(dict(target="patched", suite="real_programs", group=g,
                             backend=backend, median=v, runs=pairs))
        if pairs > 1:
            recs.append(dict(target="patched", suite="real_programs", group="pairs",
                             case="regression", measure=g, a=[base] * pairs,
                             b=[base * r] * pairs))
    recs.append(dict(target="patched", suite="real_programs", group="rdb", case="checksum",
                     sum="1-2-3", same=same, saves_ok=True, digests_same=True, runs=2,
                     digest_plain="ab", digest_cow="ab"))
    return recs


class RealProgramsReport(SuiteReport):
    SUITE = real_programs
    GOOD = {"fork": 0.05, "lat-p999": 0.9, "rss-sum-peak": 1.0, "used-peak": 0.8,
            "execs": 6.0}

    def verdicts(self, md):
        rows = md.split("| goal |")[1].splitlines()[2:7]
        return [r.rsplit("|", 2)[1].strip() for r in rows]

    def test_point_estimates(self):
        v = self.verdicts(self.render(real_records(self.GOOD)))
        self.assertTrue(all(x.startswith("met on the point estimate (1 pair:") for x in v), v)
        bad = dict(self.GOOD, fork=0.5, execs=2.0)
        v = self.verdicts(self.render(real_records(bad)))
        self.assertTrue(v[0].startswith("**NOT met**") and v[4].startswith("**NOT met**"), v)

    def test_no_growth_is_met(self):
        # COW's memory did not grow at all during the save: a ratio of 0 or less.
        v = self.verdicts(self.render(real_records(dict(self.GOOD, **{"used-peak": -0.5}))))
        self.assertTrue(v[3].startswith("met on the point estimate"), v)

    def test_paired(self):
        # Identical pairs: a zero-width interval, on the goal's side.
        v = self.verdicts(self.render(real_records(self.GOOD, pairs=pairstats.MIN_PAIRS)))
        self.assertEqual(v, ["met"] * 5)

    def test_rdb_and_skips(self):
        md = self.render(real_records(self.GOOD, same=False))
        self.assertIn("**NOT identical**", md)
        md = self.render([dict(target="patched", suite="real_programs", group="afl",
                               case="unavailable", reason="no afl-fuzz here")])
        self.assertIn("AFL++ (patched): SKIP: no afl-fuzz here", md)
        self.assertIn("not measured", md)

    def test_stock_beside_patched(self):
        recs = real_records(self.GOOD) + [
            dict(target="stock", suite="real_programs", group="fork", backend="plain",
                 median=2.0, runs=1),
            dict(target="stock", suite="real_programs", group="rdb", case="checksum",
                 sum="1-2-3", same=True, saves_ok=True, runs=1, digest_plain="ab",
                 digest_cow=None, digests_same=None)]
        md = self.render(recs)
        self.assertIn("| fork (latest_fork_usec, ms) | 0.00 | 0.00 | 0.00 |", md)
        self.assertIn("stock kernel: record checksum `1-2-3` (the patched guest's) identical", md)
        recs[-1]["sum"] = "9-9-9"
        self.assertIn("(**not** the patched guest's)", self.render(recs))
        # Plain alone on stock: half the patched guest's time.
        self.assertLess(real_programs.estimate("full", "stock"),
                        real_programs.estimate("full", "patched"))

    def test_runs_and_plan(self):
        self.assertTrue(real_programs.ROOTFS)
        self.assertFalse(real_programs.QUICK)
        for mode in ("quick", "full"):
            argv = dict(real_programs.runs(mode, "patched"))
            redis = next(a for label, a in argv.items() if label.startswith("redis"))
            # About 1 GiB of data, the size the goals are set at.
            keys, size = (int(redis[redis.index(o) + 1]) for o in ("--keys", "--size"))
            self.assertAlmostEqual(keys * size / (1 << 30), 1, delta=0.1)


SAMPLE_META = {"mode": "full", "date": "2026-12-02 16:09:41 UTC",
               "host": {"cpu": "Test CPU", "cpus": 2, "kernel": "6.18.44"}, "accel": "tcg",
               "guest": {"vcpus": 2, "mem_gib": 4}, "repo_commit": "ab12" * 10,
               "repo_dirty": False, "queue_commit": "cd34" * 10, "base_commit": "ef56" * 10,
               "kernels": {"patched": {"release": "6.12.117", "guest_cpu": "QEMU",
                                       "build": "build/out/patched-bench",
                                       "config_sha256": "0" * 64, "debug_options": []}},
               "command": "bench/run.sh --only cow_pte --targets patched"}
OLD_TABLE = "| goal | old |\n|---|---|\n| fork | 0.095 |\n"
SAMPLE_DOC = ("# COW page tables\n\nBefore.\n\n<!-- bench:cow_pte goals -->\n\nOld run.\n\n"
              + OLD_TABLE + "\n<!-- end bench:cow_pte goals -->\n\nAfter.\n")


class WriteDocs(unittest.TestCase):
    """bench/run.sh --report-only --write-docs on a sample results.json and a doc in a
    scratch tree."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root, self.out = self.tmp.name, os.path.join(self.tmp.name, "report")
        os.makedirs(os.path.join(self.root, "docs", "results"))
        os.makedirs(self.out)
        self.doc = os.path.join(self.root, cow_pte.DOC)
        self.saved_root, runner.ROOT = runner.ROOT, self.root
        # The default base here is the fake root's, which has none: a base named in the
        # environment (a user's MMEXT_BASE=7.3, say) would be another one.
        self.saved_base = os.environ.pop("MMEXT_BASE", None)

    def tearDown(self):
        runner.ROOT = self.saved_root
        os.environ.pop("MMEXT_BASE", None)
        if self.saved_base is not None:
            os.environ["MMEXT_BASE"] = self.saved_base
        self.tmp.cleanup()

    def run_docs(self, doc, records=None, **meta):
        """Exit status, stderr and the doc's bytes after the run."""
        with open(self.doc, "w") as f:
            f.write(doc)
        with open(os.path.join(self.out, "results.json"), "w") as f:
            json.dump({"meta": dict(SAMPLE_META, **meta),
                       "records": cow_records(CowPteReport.GOOD) if records is None
                       else records}, f)
        err, argv = io.StringIO(), sys.argv
        sys.argv = ["runner.py", "--report-only", "--write-docs", "--out", self.out]
        try:
            with contextlib.redirect_stderr(err):
                rc = runner.main()
        finally:
            sys.argv = argv
        with open(self.doc, "rb") as f:
            return rc, err.getvalue(), f.read()

    def test_block_replaced(self):
        rc, err, got = self.run_docs(SAMPLE_DOC)
        self.assertEqual(rc, 0, err)
        got = got.decode()
        head, block = got.split("<!-- bench:cow_pte goals -->\n")
        block, tail = block.split("<!-- end bench:cow_pte goals -->\n")
        self.assertEqual(head, SAMPLE_DOC.split("<!-- bench")[0])
        self.assertEqual(tail, "\nAfter.\n")
        self.assertNotIn("Old run", block)
        self.assertIn("`bench/run.sh --only cow_pte --targets patched` at repo "
                      + "ab12" * 3 + ", no uncommitted changes", " ".join(block.split("\n")))
        table = [line for line in block.splitlines() if line.startswith("|")]
        self.assertEqual(table[0], "| goal | COW / plain [95% interval] | pairs | verdict |")
        self.assertEqual([r.rsplit("|", 2)[1].strip() for r in table[2:]],
                         ["met"] * len(cow_pte.GOALS))
        # report.md shows the same table, from the same function.
        with open(os.path.join(self.out, "report.md")) as f:
            self.assertIn("\n".join(table), f.read())
        self.assertEqual(os.listdir(os.path.dirname(self.doc)), ["cow-pte.md"])
        # A second run from the same results changes nothing.
        self.assertEqual(self.run_docs(got)[2].decode(), got)

    def test_refusals_leave_the_doc(self):
        stock_only = [dict(r, target="stock") for r in cow_records(CowPteReport.GOOD)]
        for why, records, meta in (("uncommitted", None, {"repo_dirty": True}),
                                   ("uncommitted", None, {"repo_dirty": None}),
                                   ("quick mode", None, {"mode": "quick"}),
                                   ("no repo commit", None, {"repo_commit": "unknown"}),
                                   ("no cow_pte results on patched", stock_only, {})):
            with self.subTest(why=why, meta=meta):
                rc, err, got = self.run_docs(SAMPLE_DOC, records, **meta)
                self.assertEqual(rc, 2)
                self.assertIn(why, err)
                self.assertEqual(got, SAMPLE_DOC.encode())

    def test_markers_missing_or_wrong(self):
        start, end = runner.doc_markers("cow_pte")
        for doc in ("# No markers\n\n" + OLD_TABLE,
                    start + "\n" + OLD_TABLE,
                    end + "\n" + OLD_TABLE + start + "\n",
                    SAMPLE_DOC + SAMPLE_DOC):
            with self.subTest(doc=doc):
                rc, err, got = self.run_docs(doc)
                self.assertEqual(rc, 2)
                self.assertIn(f"{cow_pte.DOC}: wants one line '{start}'", err)
                self.assertEqual(got, doc.encode())

    def test_suites_without_a_block(self):
        meta, recs = SAMPLE_META, cow_records(CowPteReport.GOOD)
        suites = [anon_names, cow_pte]
        with self.assertRaisesRegex(runner.DocsError, "no docs block for anon_names"):
            runner.write_docs(meta, recs, suites, ["anon_names"], self.out)
        with self.assertRaisesRegex(runner.DocsError, "no suite of these results"):
            runner.write_docs(meta, [dict(r, suite="anon_names") for r in recs], suites,
                              None, self.out)

    def test_every_doc_has_its_block(self):
        # The real docs: each DOC holds its suite's markers once.
        for s in (importlib.import_module("suites." + n) for n in SUITES):
            if getattr(s, "DOC", None):
                with open(os.path.join(self.saved_root, s.DOC)) as f:
                    runner.replace_block(f.read(), s.KEY, [], s.DOC)


class Runner(unittest.TestCase):
    def suites(self):
        return [importlib.import_module("suites." + n) for n in SUITES]

    def total(self, mode):
        # What bench/run.sh [--quick] runs without --only, one boot per root filesystem.
        suites = self.suites()
        if mode == "quick":
            suites = runner.quick_suites(suites)
        return (sum(s.estimate(mode, t) for s in suites for t in runner.TARGETS
                    if t in s.TARGETS) +
                runner.GUEST_BOOT * sum(len(runner.boots([s for s in suites if t in s.TARGETS]))
                                        for t in runner.TARGETS if t != "host"))

    def test_boots(self):
        # Suites on the Debian root get a boot of their own, after the initramfs one.
        got = runner.boots(self.suites())
        self.assertEqual([r for r, _ in got], [False, True])
        self.assertIn(real_programs, got[1][1])
        self.assertNotIn(real_programs, got[0][1])
        self.assertEqual(runner.boots([cow_pte]), [(False, [cow_pte])])

    def test_quick_leaves_out_long_suites(self):
        keys = [s.KEY for s in runner.quick_suites(self.suites())]
        self.assertNotIn("real_programs", keys)
        self.assertIn("cow_pte", keys)

    def test_quick_fits(self):
        self.assertLessEqual(self.total("quick"), runner.QUICK_BUDGET)

    def test_full_is_longer(self):
        self.assertGreater(self.total("full"), self.total("quick"))

    def test_longer(self):
        s = anon_names
        base = s.estimate("full", "stock")
        secs = [a[a.index("--seconds") + 1] for _, a in s.runs("full", "stock")]
        try:
            s.LONGER = 4
            self.assertGreater(s.estimate("full", "stock"), 3 * base)
            longer = [a[a.index("--seconds") + 1] for _, a in s.runs("full", "stock")]
            self.assertEqual([int(x) for x in longer], [4 * int(x) for x in secs])
        finally:
            s.LONGER = 1

    def test_keys_are_module_names(self):
        # --only, the records and the report all use KEY: it must be the file's name.
        for name, s in zip(SUITES, self.suites()):
            self.assertEqual(s.KEY, name)

    def test_plans(self):
        for s in self.suites():
            for mode in ("quick", "full"):
                for t in s.TARGETS:
                    for label, argv in s.runs(mode, t):
                        self.assertTrue(os.path.exists(os.path.join(BENCH, argv[0] + ".c")) or
                                        os.access(os.path.join(BENCH, argv[0]), os.X_OK),
                                        f"{s.KEY}: {argv[0]}")
                        self.assertTrue(all(isinstance(a, str) for a in argv))

    def test_suite_times_and_runs(self):
        recs, times = [], {}
        p = runner.Parser("stock", recs, quiet=True, times=times)
        p.line("@@suite anon_names a")
        p.line('# bench {"case":"machine","runs":200}')
        p.line('# bench {"case":"unnamed","runs":30}')
        p.line('# bench {"case":"named","runs":30}')
        p.line("@@suite write_tracking b")
        p.line('# bench {"case":"x","runs":5}')
        p.line("@@end")
        self.assertEqual(set(times), {"anon_names", "write_tracking"})
        self.assertEqual(runner.timed_runs(recs, "stock", "anon_names"), (2, 60))
        lines = runner.run_summary(recs, {"stock": times},
                                   {"stock": {"anon_names": 60, "write_tracking": 1}})
        self.assertIn("2 results of 60 timed runs", lines[0])

    def test_kernel_dir_asks_lib_sh(self):
        # scripts/lib.sh owns the map from a kernel to its build directory, -debug too.
        saved = {k: os.environ.get(k) for k in ("BENCH", "DEBUG")}
        try:
            for bench, debug, want in (("1", "0", "patched-bench"), ("0", "1", "patched-debug"),
                                       ("0", "0", "patched")):
                os.environ.update(BENCH=bench, DEBUG=debug)
                d = runner.kernel_dir("patched")
                self.assertEqual(os.path.basename(d), want)
                self.assertTrue(os.path.isabs(d), d)
            os.environ.update(BENCH="1", DEBUG="1")
            self.assertEqual(runner.kernel_dir("patched"), "")
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    def test_base_picks_the_tree(self):
        # --base (MMEXT_BASE) picks the tree whose commits the report records; lib.sh
        # owns the map, and an unknown base, bad input, changes nothing.
        saved = os.environ.get("MMEXT_BASE")
        try:
            os.environ["MMEXT_BASE"] = "7.3"
            self.assertEqual(runner.kernel_tree(),
                             os.path.join(runner.BUILD, "7.3", "linux"))
            os.environ["MMEXT_BASE"] = ""
            self.assertEqual(runner.kernel_tree(), os.path.join(runner.BUILD, "linux"))
            for args in (["--base", "9.9"], ["--base", "7.3", "--write-docs"]):
                err = io.StringIO()
                with self.assertRaises(SystemExit) as e, contextlib.redirect_stderr(err), \
                        unittest.mock.patch.object(sys, "argv", ["run.sh"] + args):
                    runner.main()
                self.assertEqual(e.exception.code, 2, args)
                self.assertIn("--base" if "9.9" in args else "--write-docs", err.getvalue())
                self.assertEqual(os.environ["MMEXT_BASE"], "", args)
        finally:
            if saved is None:
                os.environ.pop("MMEXT_BASE", None)
            else:
                os.environ["MMEXT_BASE"] = saved

    def test_guest_vcpus_from_the_guests(self):
        # scripts/vm.sh sets the vCPUs; the report shows what the guests counted.
        recs = [{"target": "host", "case": "machine", "cpus": 64},
                {"target": "stock", "case": "machine", "cpus": 2},
                {"target": "patched", "case": "machine", "cpus": 2},
                {"target": "patched", "case": "fork", "cpus": 8}]
        self.assertEqual(runner.guest_vcpus(recs), "2")
        recs.append({"target": "patched", "case": "machine", "cpus": 4})
        self.assertEqual(runner.guest_vcpus(recs), "2, 4")
        self.assertEqual(runner.guest_vcpus(recs[:1]), "?")

    def test_guest_script_ends(self):
        script = runner.guest_script(self.suites()[:1], "quick", "stock")
        self.assertTrue(script.rstrip().endswith("echo @@end"))


if __name__ == "__main__":
    unittest.main()
