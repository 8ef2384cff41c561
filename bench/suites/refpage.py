# SPDX-License-Identifier: GPL-2.0
"""Reference pages: pattern-initialised memory, upstream's microbenchmark (the v4 cover
letter) and real program (v3: a pattern-initialising allocator under a PDF renderer).
Interface: see anon_names.py."""

import os

import pairstats

KEY = "refpage"
TITLE = "Reference pages (`refpage_create`): pattern-initialised memory"
TARGETS = ("host", "stock", "patched")

RUNS = {"quick": {"host": 200, "guest": 20}, "full": {"host": 2000, "guest": 100}}
BACKENDS = ("anon", "anon_4k", "memset", "memset_4k", "refpage", "refpage_nocache",
            "refpage_reuse", "emulated")
# Seconds per run of all backends and both cases (host native, guest TCG with the
# benchmark kernels; see suites/__init__.py).
SECONDS_PER_RUN = {"host": 0.04, "guest": 0.8}

# The real program: pdftoppm renders bench/mkpdf.py's 4 pages (20 600x600 images, lines)
# under pattern_shim.so (tools/pattern_shim.c); runs per method, plus one untimed run each. Quick mode
# renders at 75 dpi, a quarter of the pixels (pages of 1.6 MB, still the shim's large
# blocks), in about half the time: under TCG this program is most of the quick mode.
SCALE_RUNS = {"quick": 0, "full": 10}
HEAP_RUNS = {"quick": {"host": 3, "guest": 1}, "full": {"host": 15, "guest": 7}}
HEAP_DPI = {"quick": 75, "full": 150}
HEAP_SECONDS = {"host": 0.5, "guest": 13}       # per run of one method at 150 dpi
HEAP_METHODS = ("anon", "memset", "refpage", "emulated")
HEAP_CMD = "pdftoppm -r {dpi} {pdf}"
BUILD = os.environ.get("MMEXT_BUILD", os.path.join(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))), "build"))


def _heap(mode, target):
    """Whether pdftoppm runs here. Quick mode leaves out the stock guest: without
    reference pages it repeats the host's methods, at TCG's cost."""
    return not (mode == "quick" and target == "stock")


def runs(mode, target):
    key = "host" if target == "host" else "guest"
    pdf = os.path.join(BUILD, "bench", "heap.pdf") if key == "host" else "heap.pdf"
    out = [("refpage", ["refpage", "--runs", str(RUNS[mode][key])])]
    # Many writers and mappers of one reference page at once, threads and processes; the
    # anonymous baseline is measured in the same boot. Full mode only: quick mode has its
    # budget (runner.QUICK_BUDGET).
    if target == "patched" and SCALE_RUNS[mode]:
        for extra in ([], ["--processes"]):
            out.append((f"refpage_scale{' processes' if extra else ''}",
                        ["refpage_scale", "--runs", str(SCALE_RUNS[mode])] + extra))
    if _heap(mode, target):
        out.append(("pattern heap (pdftoppm)",
                     ["pattern_heap", "--runs", str(HEAP_RUNS[mode][key]),
                      "--cmd", HEAP_CMD.format(dpi=HEAP_DPI[mode], pdf=pdf)]))
    return out


def estimate(mode, target):
    key = "host" if target == "host" else "guest"
    # refpage_scale: 1 s per run, 1 and 2 workers, two backends, threads and processes.
    scale = 2 * 2 * 2 * SCALE_RUNS[mode] * 1.1 if target == "patched" else 0
    return (int(RUNS[mode][key] * SECONDS_PER_RUN[key] + scale) + 5
            + _heap(mode, target) * int((HEAP_RUNS[mode][key] + 1) * len(HEAP_METHODS)
                                        * HEAP_SECONDS[key] * HEAP_DPI[mode] / 150))


def _r(ctx, t, case, b):
    return ctx.one(target=t, group="refpage", case=case, backend=b)


def _us(x):
    return "–" if x is None else f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def report(ctx):
    md = ["The v4 cover letter's figures (DragonBoard 845c, 4 MB mapping): writing 4 KiB "
          "of it took 3.96 s with memset against 0.027 s with reference pages (−98.8%, a "
          "loop of many mappings), max RSS 6656 → 3448 KiB; writing all of it −15%. The v3 "
          "real-program figures (Pixel 4, Scudo, PDFium; real time / max RSS): anon "
          "2.237 s / 107088 KiB, memset 2.252 s / 112180 KiB, refpage 2.244 s / 107128 KiB.", ""]
    targets = [t for t in TARGETS if ctx.find(target=t, case="machine")]
    runs = {t: (ctx.one(target=t, case="machine", bench="refpage") or {}).get("runs")
            for t in targets}
    md += ["Ours: `bench/refpage`, one 4 MiB mapping whose clean pages must read as a "
           "pattern byte: map (and fill), write 4 KiB (sparse) or 4 MiB (dense), unmap; "
           "median µs per mapping and the mapping's Rss once written. `anon`/`memset` use "
           "the system's THP setting (the guests: always, so 4 MiB of anon is two huge page "
           "faults), `anon_4k`/`memset_4k` add MADV_NOHUGEPAGE: base pages, as reference "
           "pages always are. `refpage` goes through libmmext, which keeps the pattern's "
           "reference page (one mmap per mapping), `refpage_nocache` too with "
           "MMEXT_PATTERN_NOCACHE (a new reference page per mapping), `refpage_reuse` maps "
           "one reference page fd again and again without libmmext, `emulated` is "
           "libmmext's memfd emulation. Runs per case: "
           + ", ".join(f"{t} {runs[t]}" for t in targets) + ".", "",
           "| kernel | backend | sparse µs | sparse Rss KiB | dense µs | dense Rss KiB "
           "| memset / it, sparse | dense | memset_4k / it, sparse | dense |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for t in targets:
        base = {k: (_r(ctx, t, "sparse", k), _r(ctx, t, "dense", k))
                for k in ("memset", "memset_4k")}
        for b in BACKENDS:
            s, d = _r(ctx, t, "sparse", b), _r(ctx, t, "dense", b)
            if not s or not d:
                u = ctx.one(target=t, group="refpage", case="unavailable", backend=b)
                md.append(f"| {t} | {b} | unavailable" + (f" (errno {u['errno']})" if u else "")
                          + " |" * 9)
                continue
            cells = []
            for k in ("memset", "memset_4k"):
                bs, bd = base[k]
                cells += [f"{bs['median'] / s['median']:.1f}×" if bs else "–",
                          f"{bd['median'] / d['median']:.2f}×" if bd else "–"]
            md.append(f"| {t} | {b} | {_us(s['median'])} | {s['rss_kib']} | "
                      f"{_us(d['median'])} | {d['rss_kib']} | " + " | ".join(cells) + " |")

    # Goals, on the kernel that has reference pages, against both baselines.
    md += ["", "**Goals**: sparse Rss within 1% of anon's (or below it), sparse at "
           "least 50× faster than memset, dense no slower than memset. Checked against the "
           "base-page baselines (like for like) and against the THP default.", "",
           "| kernel | backend | baseline | sparse Rss vs anon | sparse speed-up | "
           "dense memset / it | met |", "|---|---|---|---|---|---|---|"]
    for t in targets:
        for b in ("refpage", "refpage_nocache", "refpage_reuse"):
            s, d = _r(ctx, t, "sparse", b), _r(ctx, t, "dense", b)
            for an, mn in (("anon_4k", "memset_4k"), ("anon", "memset")):
                a, ms, md_ = (_r(ctx, t, "sparse", an), _r(ctx, t, "sparse", mn),
                              _r(ctx, t, "dense", mn))
                if not (a and ms and md_ and s and d):
                    continue
                rss_ok = s["rss_kib"] <= 1.01 * a["rss_kib"]
                sp = ms["median"] / s["median"]
                dn = md_["median"] / d["median"]
                met = rss_ok and sp >= 50 and dn >= 1
                md.append(f"| {t} | {b} | {mn} | {s['rss_kib']} vs {a['rss_kib']} KiB | "
                          f"{sp:.1f}× | {dn:.2f}× | {'yes' if met else 'no'} |")
    if not any(_r(ctx, t, "sparse", "refpage") for t in targets):
        md.append("\nNo kernel in this run has reference pages.")
    md += paired_goals(ctx, targets)

    md += ["", *heap_report(ctx, targets)]

    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(targets), figsize=(4.5 * len(targets), 4), squeeze=False)
    for ax, t in zip(axes[0], targets):
        w = 0.4
        for i, case in enumerate(("sparse", "dense")):
            ys = [(_r(ctx, t, case, b) or {}).get("median", 0) for b in BACKENDS]
            ax.bar([x + (i - 0.5) * w for x in range(len(BACKENDS))], ys, w, label=case)
        ax.set_yscale("log")
        ax.set_xticks(range(len(BACKENDS)), ["anon", "anon4k", "memset", "ms4k", "refpage",
                                             "nocache", "reuse", "emul"], fontsize=8)
        ax.set_title(f"{t}: 4 MiB mapping")
        ax.set_ylabel("median µs per mapping (log)")
        ax.legend(fontsize=8)
    md += ["", ctx.plot(fig, "refpage.png", "pattern memory medians per backend")]
    md += scale_report(ctx, targets)
    return "\n".join(md)


def scale_report(ctx, targets):
    """Many workers mapping and writing one reference page against anonymous memory."""
    rows = []
    for t in targets:
        for procs in (False, True):
            got = {(r["backend"], r["workers"]): r for r in ctx.find(
                target=t, group="refpage_scale", processes=procs)}
            if not any(b == "refpage" for b, _ in got):
                continue
            for w in sorted({w for _, w in got}):
                a, r = got.get(("anon_4k", w)), got.get(("refpage", w))
                if a and r:
                    rows.append(f"| {t} | {w} {'processes' if procs else 'threads'} | "
                                f"{a['median']:.0f} ({a['min']:.0f}-{a['max']:.0f}) | "
                                f"{r['median']:.0f} ({r['min']:.0f}-{r['max']:.0f}) | "
                                f"{r['median'] / a['median']:.2f} |")
    if not rows:
        return []
    return ["", "Many writers and mappers at once (`bench/refpage_scale`: each worker maps "
            "1 MiB, writes every page and unmaps it, for 1 s per run; reference-page "
            "workers all map one reference page). MiB written per second, median (min-max):",
            "", "| kernel | workers | anon, base pages | reference page | ratio |",
            "|---|---|---|---|---|"] + rows


# The speed goals as paired verdicts: refpage's time against memset's, in percent.
PAIRED_GOALS = (("sparse", -98.0, "at least 50× faster"), ("dense", 0.0, "no slower"))


def paired_goals(ctx, targets):
    """The backends take turns run by run, so each refpage mapping has a memset mapping
    timed a moment before or after it: the speed goals from those pairs, with intervals."""
    rows = []
    for t in targets:
        for case, goal, words in PAIRED_GOALS:
            for base in ("memset_4k", "memset"):
                r = ctx.one(target=t, case="regression", what=f"{case} vs {base}")
                if not r:
                    continue
                reg = pairstats.regression(r["a"], r["b"])
                rows.append(f"| {t} | {case} | {base} | {words} ({goal:+.0f}%) | "
                            f"{pairstats.fmt(reg)} | {pairstats.verdict(reg, goal)} |")
    if not rows:
        return []
    return ["", f"Paired (refpage, through libmmext, against memset timed a moment apart; "
            f"time of refpage / memset − 1, median of the pairs, {pairstats.LEVEL:.0%} "
            "bootstrap interval; met when the whole interval is at or below the goal):", "",
            "| kernel | case | baseline | goal | refpage vs memset | verdict |",
            "|---|---|---|---|---|---|", *rows]


def heap_report(ctx, targets):
    """The real-program table: pdftoppm under the allocator shim, per method."""
    md = ["### The real program: a pattern-initialising allocator under pdftoppm", "",
          "`bench/pattern_heap` runs `"
          + HEAP_CMD.format(dpi=HEAP_DPI[ctx.mode], pdf="heap.pdf") + "` (poppler; the PDF "
          "is made by bench/mkpdf.py: 4 pages, 20 images of 600x600 RGB and line plots) "
          "with `pattern_shim.so` (`tools/pattern_shim.c`) preloaded. The shim gives every malloc()/realloc() "
          "of 128 KiB or more a mapping of its own and pattern-initialises it (byte 0xa5) "
          "by the method; calloc() gets anonymous memory, smaller blocks stay with glibc. "
          "`anon`: no pattern (the baseline); `memset`: filled on allocation; `refpage`: "
          "libmmext's kernel backend, a private mapping of the reference page it keeps for "
          "the pattern; `emulated`: libmmext's memfd emulation. "
          "Median real time and median maximum RSS (wait4) of the process; the rendered "
          "output must hash the same under every method. The v3 cover letter's (Pixel 4, "
          "Scudo, PDFium): anon 2.237 s / 107088 KiB, memset 2.252 s / 112180 KiB, refpage "
          "2.244 s / 107128 KiB." + (" Quick mode renders at 75 dpi and leaves the stock "
                                     "guest out (no reference pages there: the host's "
                                     "methods again)." if ctx.mode == "quick" else ""), "",
          "| kernel | method | real s | vs anon | max RSS KiB | vs anon | large blocks "
          "| output as anon's | runs |", "|---|---|---|---|---|---|---|---|---|"]
    rows = 0
    for t in targets:
        base = ctx.one(target=t, group="pattern_heap", case="real_time", backend="anon")
        for m in HEAP_METHODS:
            r = ctx.one(target=t, group="pattern_heap", case="real_time", backend=m)
            if not r:
                u = ctx.one(target=t, group="pattern_heap", case="unavailable", backend=m)
                if u:
                    md.append(f"| {t} | {m} | unavailable (no reference pages) |" + " |" * 6)
                continue
            rows += 1
            vt = f"{r['median'] / base['median']:.3f}×" if base else "–"
            vr = f"{r['maxrss_kib'] / base['maxrss_kib']:.3f}×" if base else "–"
            md.append(f"| {t} | {m} | {r['median']:.3f} | {vt} | {r['maxrss_kib']} | {vr} "
                      f"| {r['blocks']} | {'yes' if r['output_same'] else '**no**'} "
                      f"| {r['runs']} |")
    if not rows:
        md.append("\nNo run of pattern_heap in these results.")
    return md
