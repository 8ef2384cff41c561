# SPDX-License-Identifier: GPL-2.0
"""Write tracking: write watch on 8192 pages, PAGEMAP_SCAN against soft-dirty and
mprotect. Interface: see anon_names.py."""

import pairstats

KEY = "write_tracking"
TITLE = "Write tracking: `PAGEMAP_SCAN` with userfaultfd `WP_ASYNC` (write watch)"
TARGETS = ("host", "stock", "patched")
DOC = "docs/results/write-tracking.md"
# The doc reads the 10x goal on the host and patch 0004's effect from stock against patched.
DOC_TARGETS = ("host", "stock", "patched")

RUNS = {"quick": {"host": 15, "guest": 2}, "full": {"host": 100, "guest": 15}}
# Interleaved rounds of the goals' cases (writewatch --pairs): enough for an interval.
PAIRS = {"quick": {"host": 21, "guest": pairstats.MIN_PAIRS + 1},
         "full": {"host": 101, "guest": 41}}
# Upstream's PAGEMAP_SCAN fast-path patch, 8192 pages (µs): (case, ours, without patch,
# with patch).
UPSTREAM_ROWS = [
    ("t1: get + write-protect (two calls)", "get_reset", "140–170", "110"),
    ("t2: write-protect only", "reset_only", "90–115", "80"),
    ("t3: atomic get-and-write-protect", "atomic_get_reset", "120–140", "100–110"),
    # Not an upstream case: what t1 spends before its write-protect (one walk for PAGEMAP_SCAN).
    ("get only (not upstream's)", "get_only", "–", "–"),
    # Nor this: t1's floor, the same two PAGEMAP_SCAN walks with the raw ioctl.
    ("two bare PAGEMAP_SCAN walks (t1's floor)", "bare_walks", "–", "–"),
]
BACKENDS = ("pagemap_scan", "soft_dirty", "mprotect")


def runs(mode, target):
    where = "host" if target == "host" else "guest"
    return [("writewatch", ["writewatch", "--runs", str(RUNS[mode][where]),
                            "--pairs", str(PAIRS[mode][where])])]


def estimate(mode, target):
    if target == "host":
        return 5 if mode == "quick" else 20
    # About 4 s per run under TCG with the benchmark kernels (see suites/__init__.py),
    # most of it the mprotect baseline's first writes; a round of the goals' cases writes
    # 1% of the pages, about 0.05 s.
    return int(4 * RUNS[mode]["guest"] + 0.05 * PAIRS[mode]["guest"] + 5)


def _med(ctx, target, case, backend):
    r = ctx.one(target=target, case=case, backend=backend)
    return r["median"] if r else None


def _us(x):
    return "–" if x is None else f"{x:.0f}" if x >= 100 else f"{x:.1f}"


# The goals, at 8192 pages with 1% written, each as (label, pair record's backend, at most
# this ratio b/a, speed-up): PAGEMAP_SCAN's atomic get-and-reset at least 10x faster than
# mprotect's and 3x faster than soft-dirty's; the library's two calls (get, then reset)
# within 1.2x of the two bare PAGEMAP_SCAN walks they make, the kernel's floor.
GOALS = (("atomic get-and-reset: PAGEMAP_SCAN ≥ 10× faster than mprotect",
          "pagemap_scan/mprotect", 1 / 10, True),
         ("atomic get-and-reset: PAGEMAP_SCAN ≥ 3× faster than soft-dirty",
          "pagemap_scan/soft_dirty", 1 / 3, True),
         ("get + reset (two calls) ≤ 1.2× two bare PAGEMAP_SCAN walks",
          "pagemap_scan/bare_walks", 1.2, False))
# The goal rounds' own medians of each side, by pair record backend: (b, a) as (case,
# backend) of the "writewatch_goal" results, and how the table names them.
GOAL_SIDES = {"pagemap_scan/mprotect": ((("atomic_get_reset", "pagemap_scan"), "PAGEMAP_SCAN"),
                                        (("atomic_get_reset", "mprotect"), "mprotect")),
              "pagemap_scan/soft_dirty": ((("atomic_get_reset", "pagemap_scan"),
                                           "PAGEMAP_SCAN"),
                                          (("atomic_get_reset", "soft_dirty"), "soft-dirty")),
              "pagemap_scan/bare_walks": ((("get_reset", "pagemap_scan"), "get + reset"),
                                          (("bare_walks", "pagemap_scan"),
                                           "floor, two bare walks"))}


def goal_rows(ctx, target):
    """One table row per goal on one kernel."""
    rows = []
    for label, backend, at_most, speedup in GOALS:
        ((cb, bb), nb), ((ca, ba), na) = GOAL_SIDES[backend]
        side = {k: ctx.one(target=target, group="writewatch_goal", case=c, backend=b)
                for k, (c, b) in (("b", (cb, bb)), ("a", (ca, ba)))}
        rec = ctx.one(target=target, group="writewatch", case="regression", backend=backend)
        if not rec:
            gone = ctx.one(target=target, case="unavailable", backend=ba)
            why = (f"not measurable ({ba} unavailable: {gone.get('detail', '')})" if gone
                   else "not measured")
            rows.append(f"| {target} | {label} | – | – | – | – | {why} |")
            continue
        try:
            reg = pairstats.regression(rec["a"], rec["b"])
        except ValueError as e:
            rows.append(f"| {target} | {label} | – | – | – | – | not measured ({e}) |")
            continue
        fig, ci = pairstats.fmt_times(reg, speedup)
        verdict = pairstats.verdict(reg, 100 * (at_most - 1))
        med = {k: _us(v["median"]) + " µs" if v else "–" for k, v in side.items()}
        rows.append(f"| {target} | {label} | {nb}: {med['b']} | {na}: {med['a']} "
                    f"| {fig} | {ci} | **{verdict}** ({reg['pairs']} pairs) |")
    return rows


def _targets(ctx):
    return [t for t in TARGETS if ctx.find(target=t, case="machine")]


def goals_table(ctx):
    """The goals table's lines, empty without goal rows: report() shows it,
    `bench/run.sh --write-docs` puts it in DOC."""
    rows = [r for t in _targets(ctx) for r in goal_rows(ctx, t)]
    if not rows:
        return []
    return ["| kernel | goal | ours (median) | reference (median) | ratio | interval | "
            "verdict |", "|---|---|---|---|---|---|---|", *rows]


def goals(ctx):
    table = goals_table(ctx)
    if not table:
        return []
    return ["", "**Goals** at 8192 pages, 1% written: PAGEMAP_SCAN's atomic get-and-reset "
            "(`MMEXT_WW_RESET`, what Wine's `GetWriteWatch` with `WRITE_WATCH_FLAG_RESET` "
            "does) at least 10× faster than mprotect's and 3× faster than soft-dirty's; the "
            "two-call get + reset within 1.2× of the kernel's floor, the two PAGEMAP_SCAN "
            "walks it makes (one reporting written pages, one write-protecting them) issued "
            "by the benchmark with the raw ioctl on the same range with the same flags. "
            "Measured again for this table in interleaved rounds (`writewatch --pairs`), "
            "each case once per round, so each pair is two runs a moment apart; the figure "
            "is the median of the pairs' ratios, with its "
            f"{pairstats.LEVEL:.0%} bootstrap interval; the verdict is \"met\" or \"NOT "
            "met\" when the whole interval is on one side of the goal, else \"not "
            "resolved\". The medians are of the same rounds.", "", *table]


def report(ctx):
    md = ["Upstream's figures (its fast-path patch, 8192 pages, one x86 machine; the patch "
          "does not say how many pages were written):", "",
          "| case | without the fast paths | with them |", "|---|---|---|"]
    for name, _, before, after in UPSTREAM_ROWS:
        if before != "–":
            md.append(f"| {name} | {before} µs | {after} µs |")
    targets = _targets(ctx)
    runs = {t: (ctx.one(target=t, case="machine") or {}).get("runs") for t in targets}
    md += ["", "Ours: `bench/writewatch`, libmmext's write watch over 8192 pages (populated "
           "first), median µs with 1% / 100% of the pages written before the call; runs per "
           "case: " + ", ".join(f"{t} {runs[t]}" for t in targets) + ". Both 6.12 kernels "
           "carry upstream's fast paths, so stock against patched shows whether our queue "
           "changes them. The last row is PAGEMAP_SCAN's alone: the two walks under its "
           "get + reset, made by the benchmark with the raw ioctl.", "",
           "| case | " + " | ".join(f"{t}: {b}" for t in targets for b in BACKENDS) + " |",
           "|---|" + "---|" * (len(targets) * len(BACKENDS))]
    unavailable = set()
    for name, case, _, _ in UPSTREAM_ROWS:
        cells = []
        for t in targets:
            for b in BACKENDS:
                lo = _med(ctx, t, f"{case} dirty=1%", b)
                hi = _med(ctx, t, f"{case} dirty=100%", b)
                if case == "bare_walks" and b != "pagemap_scan":
                    cells.append("–")
                elif lo is None:
                    unavailable.add((t, b))
                    cells.append("n/a")
                else:
                    cells.append(f"{_us(lo)} / {_us(hi)}")
        md.append(f"| {name} | " + " | ".join(cells) + " |")
    for t, b in sorted(unavailable):
        r = ctx.one(target=t, case="unavailable", backend=b)
        if r:
            md.append(f"\n{t}: {b} unavailable ({r.get('detail', '')}).")

    # Ratios: the other approaches against PAGEMAP_SCAN, and patched against stock.
    md += ["", "**Ratios** (median of the other / median of pagemap_scan; > 1: PAGEMAP_SCAN "
           "faster):", "", "| case | written | " +
           " | ".join(f"{t}: {b}" for t in targets for b in BACKENDS[1:]) + " |",
           "|---|---|" + "---|" * (len(targets) * 2)]
    for name, case, _, _ in UPSTREAM_ROWS[:-1]:
        for d in ("1%", "100%"):
            cells = []
            for t in targets:
                base = _med(ctx, t, f"{case} dirty={d}", "pagemap_scan")
                for b in BACKENDS[1:]:
                    x = _med(ctx, t, f"{case} dirty={d}", b)
                    cells.append(f"{x / base:.2f}×" if x and base else "–")
            md.append(f"| {case} | {d} | " + " | ".join(cells) + " |")
    md += goals(ctx)
    if "stock" in targets and "patched" in targets:
        md += ["", "**Patched / stock**, pagemap_scan median (1.00 = no change):", "",
               "| case | 1% written | 100% written |", "|---|---|---|"]
        for name, case, _, _ in UPSTREAM_ROWS:
            cells = []
            for d in ("1%", "100%"):
                a = _med(ctx, "stock", f"{case} dirty={d}", "pagemap_scan")
                b = _med(ctx, "patched", f"{case} dirty={d}", "pagemap_scan")
                cells.append(f"{b / a:.2f}" if a and b else "–")
            md.append(f"| {case} | " + " | ".join(cells) + " |")

    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(targets), figsize=(4.5 * len(targets), 4), squeeze=False)
    for ax, t in zip(axes[0], targets):
        w = 0.25
        for i, b in enumerate(BACKENDS):
            ys = [_med(ctx, t, f"{case} dirty=1%", b) or 0 for _, case, _, _ in UPSTREAM_ROWS]
            ax.bar([x + (i - 1) * w for x in range(len(UPSTREAM_ROWS))], ys, w, label=b)
        ax.set_yscale("log")
        ax.set_xticks(range(len(UPSTREAM_ROWS)),
                      ["get+WP", "WP only", "atomic", "get", "bare walks"])
        ax.set_title(f"{t}: 8192 pages, 1% written")
        ax.set_ylabel("median µs (log)")
        ax.legend(fontsize=8)
    md += ["", ctx.plot(fig, "write_tracking.png", "write watch medians per backend")]
    return "\n".join(md)
