# SPDX-License-Identifier: GPL-2.0
"""Seed 002: mmap()/munmap() latency while /proc/PID/maps is scanned, maps read throughput
and PROCMAP_QUERY lookups with and without a concurrent writer.
Interface: see s000_fork_named.py."""

import statistics

import pairstats

SEED = "002"
TITLE = "`/proc/pid/maps` and `PROCMAP_QUERY` without mmap_lock"
TARGETS = ("host", "stock", "patched")

# (runs, seconds per run) of the seed's mapper; vma_lookup runs per case.
PLAN = {"quick": {"runs": 10, "seconds": 1.0, "lookup_runs": 5, "pairs": 21},
        "full": {"runs": 100, "seconds": 2.0, "lookup_runs": 15, "pairs": 61}}
# "No slower uncontended reads (within 5%)": the lockless reader against the mmap_lock one.
READ_GOAL_PCT = 5.0
# The seed's figures (v3 cover letter; Paul McKenney's test, 10 s runs).
SEED_PATCHED_MEDIAN_US = 10.0


def runs(mode, target):
    p = PLAN[mode]
    n = str(p["lookup_runs"])
    # --pin: the mapper gets a CPU of its own, as on the seed's machine (see maps_latency.c).
    return [("maps_latency", ["maps_latency", "--runs", str(p["runs"]),
                              "--seconds", str(p["seconds"]), "--pin"]),
            ("vma_lookup 10k", ["vma_lookup", "--vmas", "10000", "--runs", n]),
            ("vma_lookup 10k writer", ["vma_lookup", "--vmas", "10000", "--writer",
                                       "--runs", n])] + (
        # Both readers of the patched kernel on the same boot in alternate runs: boots
        # differ more than readers do (memory layout), so this is the fair comparison.
        [("vma_lookup 10k both readers", ["vma_lookup", "--vmas", "10000", "--lockless",
                                          "ab", "--runs", str(p["pairs"])]),
         # File-backed lines: a path to print; the lockless readers copy them holding
        # a file reference (kernel patches 0015-0016) instead of the VMA lock.
         ("vma_lookup 10k file both readers", ["vma_lookup", "--vmas", "10000", "--file",
                                               "--lockless", "ab", "--runs", str(p["pairs"])])]
        if target == "patched" else [])


def estimate(mode, target):
    p = PLAN[mode]
    # The mapper's runs (wall-clock seconds each, plus start-up), then both vma_lookup
    # cases: about 1.3 s per run under TCG with the benchmark kernels (see
    # suites/__init__.py), 0.2 s on the host.
    per_lookup = 0.2 if target == "host" else 1.3
    # A pair of readers: two reads and 2 x 5000 lookups, about 0.1 s under TCG; two cases.
    pairs = 2 * p["pairs"] * 0.1 if target == "patched" else 0
    return int(p["runs"] * p["seconds"] * 1.05 + 2 * p["lookup_runs"] * per_lookup + pairs + 3)


def _runs(ctx, target):
    return ctx.find(target=target, group="maps_latency", case="run")


def _uncontended(ctx, target):
    r = ctx.one(target=target, group="maps_latency", case="mmap/munmap op uncontended")
    return r["median"] if r else None


def _us(x):
    return "–" if x is None else f"{x:.1f} µs"


def _fallbacks(ctx, target):
    """Share of lockless maps lookups repeated under mmap_lock (/proc/vmstat)."""
    r = ctx.one(target=target, group="maps_latency", case="vmstat")
    if not r:
        return "–"
    n = r["vma_lock"] + r["mmap_lock"]
    return f"{100 * r['mmap_lock'] / n:.2f}% of {n:,}" if n else "0"


def _frac_above(maxima, thr_us):
    return sum(m > thr_us for m in maxima) / len(maxima) if maxima else None


def _pct(x):
    return "–" if x is None else f"{100 * x:.0f}%"


def _lookup(ctx, target, what, backend):
    r = ctx.one(target=target, group="vma", case=what, backend=backend)
    return r["median"] if r else None


def report(ctx):
    targets = [t for t in TARGETS if _runs(ctx, t)]
    md = ["The seed's test (Paul McKenney's benchmark, v3 cover letter): one process unmaps "
          "and maps back 4 KiB pages at random in a 128 MiB anonymous range and times each "
          "call; two processes scan its /proc/PID/maps continuously; per 10 s run the "
          "maximum and mean latency. Seed: stock 78% of runs with a maximum above 0.5 ms "
          "(more than half above 1 ms), median 13 µs; patched 98% of runs below 0.5 ms, "
          "median 10 µs.", ""]
    if not targets:
        return "\n".join(md + ["No results."])
    p = PLAN[ctx.mode]
    md.append(f"Ours: `bench/maps_latency`, {p['runs']} runs of {p['seconds']:g} s per "
              "kernel, 2 scanners, in the same invocation. The mapper runs alone on CPU 0 and "
              "the scanners share the other CPU(s) (`--pin`): the seed's machine had a CPU per "
              "process, and with 3 processes on 2 vCPUs the mapper's latency would mostly be "
              "waiting for a CPU, more so on the patched kernel, whose scanners never sleep on "
              "mmap_lock.")
    # Thresholds scaled to this machine: the stock kernel's mapper with nobody reading its
    # maps, against the seed's patched median (its mapper barely waited: the nearest the
    # seed comes to an uncontended figure).
    unc = _uncontended(ctx, "stock")
    scale = unc / SEED_PATCHED_MEDIAN_US if unc else None
    thr = [500.0, 1000.0]
    if scale and scale > 1.5:
        thr += [500.0 * scale, 1000.0 * scale]
        md.append(f"Scaled thresholds: with nobody reading its maps, the mapper's median "
                  f"operation takes {unc:.1f} µs on our stock kernel, against the seed's "
                  f"patched median of 10 µs, a factor of {scale:.1f}; 0.5 ms and 1 ms scale "
                  f"to {thr[2] / 1000:.1f} ms and {thr[3] / 1000:.1f} ms. Per-run maxima "
                  "under TCG also catch vCPU preemption by the host, which no kernel change "
                  "removes: the operation latency percentiles over all runs (p99, p99.9) "
                  "show the tail more steadily, and the rows \"nobody reading\" (the same mapper "
                  "alone, a fifth as many runs) show what the machine adds by itself.")
    md += ["", "| kernel | runs | " + " | ".join(f"max > {t / 1000:.3g} ms" for t in thr) +
           " | median op | p99 | p99.9 | median of run means | worst max | scanner reads/run "
           "| lookups under mmap_lock |", "|---|---|" + "---|" * (len(thr) + 7)]
    md.append("| seed stock | – | 78% | >50% | " + " | " * (len(thr) - 2) +
              "13 µs | – | – | – | – | – | – |")
    md.append("| seed patched | – | 2% | – | " + " | " * (len(thr) - 2) +
              "10 µs | – | – | – | – | – | – |")
    rows = {}
    for t in targets:
        rs = _runs(ctx, t)
        maxima = [r["max_us"] for r in rs]
        means = [r["mean_us"] for r in rs]
        reads = [r["scanner_reads"] for r in rs]
        op = ctx.one(target=t, group="maps_latency", case="mmap/munmap op") or {}
        med = op.get("median")
        rows[t] = (maxima, med)
        floor = [r["max_us"] for r in ctx.find(target=t, group="maps_latency",
                                                case="uncontended run")]
        if floor:
            md.append(f"| {t}, nobody reading | {len(floor)} | " +
                      " | ".join(_pct(_frac_above(floor, x)) for x in thr) +
                      f" | {_us(_uncontended(ctx, t))} | | | | "
                      f"{max(floor) / 1000:.1f} ms | – | – |")
        md.append(f"| {t} | {len(rs)} | " +
                  " | ".join(_pct(_frac_above(maxima, x)) for x in thr) +
                  f" | {_us(med)} | {_us(op.get('p99'))} | {_us(op.get('p999'))} | "
                  f"{statistics.median(means):.1f} µs | "
                  f"{max(maxima) / 1000:.1f} ms | {statistics.median(reads):.0f} | "
                  f"{_fallbacks(ctx, t)} |")
    if "stock" in rows and "patched" in rows and rows["stock"][1] and rows["patched"][1]:
        r = rows["patched"][1] / rows["stock"][1]
        md += ["", f"Median operation latency patched/stock: **{r:.2f}** (goal ≤ 0.8; the "
               f"seed's 10/13 = 0.77)."]

    md += ["", "Reads without and with a concurrent writer (`bench/vma_lookup --vmas 10000 "
           "[--writer]`: 10k one-page VMAs in the reading process; the writer is a thread "
           "of that process unmapping and mapping back pages of its own range). Medians:", "",
           "| kernel | maps read(2), no writer | maps read(2), writer | PROCMAP_QUERY "
           "lookups/s, no writer | lookups/s, writer |", "|---|---|---|---|---|"]
    for t in targets:
        a = _lookup(ctx, t, "read(2) only 10k", "text")
        b = _lookup(ctx, t, "read(2) only 10k +writer", "text")
        c = _lookup(ctx, t, "point_lookup 10k", "procmap_query")
        d = _lookup(ctx, t, "point_lookup 10k +writer", "procmap_query")
        md.append(f"| {t} | " + " | ".join(
            "–" if x is None else f"{x:.1f} ms" for x in (a, b)) + " | " + " | ".join(
            "–" if x is None else f"{1e6 / x:,.0f}" for x in (c, d)) + " |")
    if "stock" in targets and "patched" in targets:
        md += ["", "Patched/stock (time ratios; < 1: patched faster):", ""]
        for what, backend, label in (("read(2) only 10k", "text", "maps read, no writer"),
                                     ("read(2) only 10k +writer", "text", "maps read, writer"),
                                     ("point_lookup 10k", "procmap_query", "lookup, no writer"),
                                     ("point_lookup 10k +writer", "procmap_query",
                                      "lookup, writer")):
            a = _lookup(ctx, "stock", what, backend)
            b = _lookup(ctx, "patched", what, backend)
            if a and b:
                md.append(f"- {label}: {b / a:.2f}")

    ab = [(f"{label}, {kind}", pairstats.regression(r["a"], r["b"]))
          for file, kind in ((False, "anonymous VMAs"), (True, "memfd VMAs"))
          for backend, label in (("text", "maps read(2)"), ("procmap_query", "PROCMAP_QUERY"))
          for r in [ctx.one(target="patched", group="vma", case="regression",
                            backend=backend, file=file)] if r]
    if ab:
        md += ["", "The patched kernel's two readers on the same boot, in alternate runs "
               "(`/sys/kernel/mm/lockless_maps/enabled` 0 and 1, AB then BA, no writer): the "
               "goal's \"no slower uncontended reads, within 5%\" compared like for like. "
               f"Lockless against mmap_lock reader time, median of the pairs' ratios with "
               f"its {pairstats.LEVEL:.0%} bootstrap interval:", ""]
        for label, reg in ab:
            md.append(f"- {label}: {pairstats.fmt(reg)} over {reg['pairs']} pairs: "
                      f"**{pairstats.verdict(reg, READ_GOAL_PCT)}**")

    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4))
    for t in targets:
        maxima = sorted(m / 1000 for m in rows[t][0])
        ax.plot(maxima, [(i + 1) / len(maxima) for i in range(len(maxima))], label=t)
    ax.set_xscale("log")
    ax.set_xlabel("per-run maximum mmap/munmap latency (ms, log)")
    ax.set_ylabel("fraction of runs")
    ax.legend()
    md += ["", ctx.plot(fig, "s002_maps_latency.png", "distribution of per-run maxima")]
    return "\n".join(md)
