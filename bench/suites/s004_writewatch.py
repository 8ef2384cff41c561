# SPDX-License-Identifier: GPL-2.0
"""Seed 004: write watch on 8192 pages, PAGEMAP_SCAN against soft-dirty and mprotect.
Interface: see s000_fork_named.py."""

SEED = "004"
TITLE = "`PAGEMAP_SCAN` with userfaultfd `WP_ASYNC` (write watch)"
TARGETS = ("host", "stock", "patched")

RUNS = {"quick": {"host": 15, "guest": 2}, "full": {"host": 100, "guest": 15}}
# The seed's fast-path patch, 8192 pages (µs): (case, ours, without patch, with patch).
SEED_ROWS = [
    ("t1: get + write-protect (two calls)", "get_reset", "140–170", "110"),
    ("t2: write-protect only", "reset_only", "90–115", "80"),
    ("t3: atomic get-and-write-protect", "atomic_get_reset", "120–140", "100–110"),
    # Not a seed case: what t1 spends before its write-protect (one walk for PAGEMAP_SCAN).
    ("get only (not in the seed)", "get_only", "–", "–"),
]
BACKENDS = ("pagemap_scan", "soft_dirty", "mprotect")


def runs(mode, target):
    n = RUNS[mode]["host" if target == "host" else "guest"]
    return [("writewatch", ["writewatch", "--runs", str(n)])]


def estimate(mode, target):
    if target == "host":
        return 5 if mode == "quick" else 20
    # About 4 s per run under TCG with the benchmark kernels (see suites/__init__.py),
    # most of it the mprotect backend's first writes.
    return 4 * RUNS[mode]["guest"] + 5


def _med(ctx, target, case, backend):
    r = ctx.one(target=target, case=case, backend=backend)
    return r["median"] if r else None


def _us(x):
    return "–" if x is None else f"{x:.0f}" if x >= 100 else f"{x:.1f}"


# Issue 3's goals for get + reset: PAGEMAP_SCAN this many times faster than each backend.
GOALS = {"mprotect": 10, "soft_dirty": 3}


def goals(ctx, targets):
    rows = []
    for t in targets:
        for d in ("1%", "100%"):
            base = _med(ctx, t, f"get_reset dirty={d}", "pagemap_scan")
            for b, want in GOALS.items():
                x = _med(ctx, t, f"get_reset dirty={d}", b)
                if x and base:
                    rows.append(f"| {t} | {d} | {b} | ≥ {want}× | {x / base:.2f}× | "
                                f"{'met' if x / base >= want else 'NOT met'} |")
    if not rows:
        return []
    return ["", "**Goals** (issue 3), get + reset (two calls): PAGEMAP_SCAN at least 10× "
            "faster than mprotect and 3× faster than soft-dirty (ratio of medians of "
            "interleaved runs):", "", "| kernel | written | against | goal | ratio | verdict |",
            "|---|---|---|---|---|---|", *rows]


def report(ctx):
    md = ["The seed's figures (its fast-path patch, 8192 pages, one x86 machine; the seed "
          "does not say how many pages were written):", "",
          "| case | without the fast paths | with them |", "|---|---|---|"]
    for name, _, before, after in SEED_ROWS:
        if before != "–":
            md.append(f"| {name} | {before} µs | {after} µs |")
    targets = [t for t in TARGETS if ctx.find(target=t, case="machine")]
    runs = {t: (ctx.one(target=t, case="machine") or {}).get("runs") for t in targets}
    md += ["", "Ours: `bench/writewatch`, libmmext's write watch over 8192 pages (populated "
           "first), median µs with 1% / 100% of the pages written before the call; runs per "
           "case: " + ", ".join(f"{t} {runs[t]}" for t in targets) + ". Both 6.12 kernels "
           "carry the seed's fast paths, so stock against patched shows whether our queue "
           "changes them.", "",
           "| case | " + " | ".join(f"{t}: {b}" for t in targets for b in BACKENDS) + " |",
           "|---|" + "---|" * (len(targets) * len(BACKENDS))]
    unavailable = set()
    for name, case, _, _ in SEED_ROWS:
        cells = []
        for t in targets:
            for b in BACKENDS:
                lo = _med(ctx, t, f"{case} dirty=1%", b)
                hi = _med(ctx, t, f"{case} dirty=100%", b)
                if lo is None:
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
    for name, case, _, _ in SEED_ROWS:
        for d in ("1%", "100%"):
            cells = []
            for t in targets:
                base = _med(ctx, t, f"{case} dirty={d}", "pagemap_scan")
                for b in BACKENDS[1:]:
                    x = _med(ctx, t, f"{case} dirty={d}", b)
                    cells.append(f"{x / base:.2f}×" if x and base else "–")
            md.append(f"| {case} | {d} | " + " | ".join(cells) + " |")
    md += goals(ctx, targets)
    if "stock" in targets and "patched" in targets:
        md += ["", "**Patched / stock**, pagemap_scan median (1.00 = no change):", "",
               "| case | 1% written | 100% written |", "|---|---|---|"]
        for name, case, _, _ in SEED_ROWS:
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
            ys = [_med(ctx, t, f"{case} dirty=1%", b) or 0 for _, case, _, _ in SEED_ROWS]
            ax.bar([x + (i - 1) * w for x in range(len(SEED_ROWS))], ys, w, label=b)
        ax.set_yscale("log")
        ax.set_xticks(range(len(SEED_ROWS)), ["get+WP", "WP only", "atomic", "get"])
        ax.set_title(f"{t}: 8192 pages, 1% written")
        ax.set_ylabel("median µs (log)")
        ax.legend(fontsize=8)
    md += ["", ctx.plot(fig, "s004_writewatch.png", "write watch medians per backend")]
    return "\n".join(md)
