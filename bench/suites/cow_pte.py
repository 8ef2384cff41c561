# SPDX-License-Identifier: GPL-2.0
"""COW page tables: fork() with copy-on-write page tables against plain fork
(bench/cow_pte.c). Interface: see anon_names.py."""

import pairstats

KEY = "cow_pte"
TITLE = "COW page tables: copy-on-write page tables at fork (`PR_COW_PTE`)"
TARGETS = ("stock", "patched")
DOC = "docs/results/cow-pte.md"
DOC_TARGETS = ("patched",)

FORK_MB = (0, 64, 256, 512, 1024)
# Per mode: fork sizes, repetitions per case (each one plain and one COW fork, a pair),
# random writes, the reclaim and migrate cases' size and fork-server children. Full mode
# has at least pairstats.MIN_PAIRS pairs for every goal; quick mode is too short for an
# interval and says "not resolved".
PLAN = {"quick": {"sizes": (0, 64, 1024), "fork": 2, "vmpte": 0, "seq": 1, "rand": 1,
                  "server": 1, "reclaim": 1, "held": 1, "migrate": 1, "writes": 20000,
                  "reclaim_mb": 64, "children": 4},
        "full": {"sizes": FORK_MB, "fork": 12, "vmpte": 3, "seq": 24, "rand": 4,
                 "server": 10, "reclaim": 24, "held": 12, "migrate": 12, "writes": 100000,
                 "reclaim_mb": 256, "children": 16}}
# The v3 cover letter's figures (QEMU, x86_64 defconfig) and the paper's.
UPSTREAM_FORK_MS_512 = 10.0          # "around 10 ms" both ways at 512 MB
UPSTREAM_VMPTE_CHILD = (2096, 44)    # kB at 1 GB: plain, COW PTE
UPSTREAM_FAULT_SEQ = (0.000770, 0.000795)   # ms per access, 512 MB: plain, COW PTE
UPSTREAM_FAULT_RAND = (0.000026, 0.000029)
PAPER_FORK_SPEEDUP_1G = 65

# The goals, as COW / plain ratios: (measure, mb, bound, at_least, words).
GOALS = (("fork", 1024, 1 / 50, False, "fork of 1 GiB, COW / plain <= 1/50"),
         ("vmpte-child", 1024, 0.05, False, "child VmPTE at 1 GiB, COW / plain <= 0.05"),
         ("fault-seq", 512, 1.15, False, "sequential write faults after fork, COW / plain "
          "<= 1.15"),
         ("server", 1024, 10.0, True, "fork-server throughput, COW / plain >= 10"),
         ("reclaim", None, 1.2, False, "reclaim of a fork server's parent, COW / plain "
          "time <= 1.2"),
         ("reclaim-held", None, 1.2, False, "reclaim while a child holds the memory, "
          "COW / plain time <= 1.2"),
         ("migrate", None, 1.2, False, "move_pages() of memory a child holds, COW / plain "
          "<= 1.2"))
# Which reclaimed-MiB group goes with a reclaim goal.
RECLAIMED = {"reclaim": "reclaimed", "reclaim-held": "reclaimed-held"}
# The reclaim goal also needs COW to give back as much: at least this share of plain's.
RECLAIMED_SHARE = 0.95


def guest_mem(mode):
    return 4


def runs(mode, target):
    p = PLAN[mode]
    out = [(f"fork {mb} MiB", ["cow_pte", "--case", "fork", "--mb", str(mb), "--runs",
                               str(p["fork"])]) for mb in p["sizes"]]
    if p["vmpte"]:
        out.append(("VmPTE 1 GiB", ["cow_pte", "--case", "vmpte", "--mb", "1024", "--runs",
                                    str(p["vmpte"])]))
    out += [("faults sequential 512 MiB", ["cow_pte", "--case", "fault-seq", "--mb", "512",
                                           "--runs", str(p["seq"])]),
            ("faults random 512 MiB", ["cow_pte", "--case", "fault-rand", "--mb", "512",
                                       "--writes", str(p["writes"]), "--runs",
                                       str(p["rand"])]),
            ("fork server 1 GiB", ["cow_pte", "--case", "server", "--mb", "1024", "--runs",
                                   str(p["server"])]),
            (f"reclaim {p['reclaim_mb']} MiB", ["cow_pte", "--case", "reclaim", "--mb",
                                                str(p["reclaim_mb"]), "--children",
                                                str(p["children"]), "--runs",
                                                str(p["reclaim"])]),
            (f"reclaim held {p['reclaim_mb']} MiB",
             ["cow_pte", "--case", "reclaim-held", "--mb", str(p["reclaim_mb"]),
              "--children", str(p["children"]), "--runs", str(p["held"])]),
            (f"migrate {p['reclaim_mb']} MiB",
             ["cow_pte", "--case", "migrate", "--mb", str(p["reclaim_mb"]), "--runs",
              str(p["migrate"])])]
    return out


# Seconds per run (plain and COW) under TCG with the benchmark kernels (see
# suites/__init__.py): fork (all five sizes, scaled by the MiB populated), VmPTE,
# sequential faults, random faults per 20000 writes, fork server. Reclaim at 256 MiB is
# a guess (populating twice, 16 forks, swapping 256 MiB out to the RAM disk), scaled by
# the MiB reclaimed, as are the held reclaim and migrate (two moves of 256 MiB): the
# runner prints the time taken beside the estimate.
SECONDS = {"fork": 4, "vmpte": 3, "seq": 9, "rand": 3, "server": 8.5, "reclaim": 8,
           "migrate": 8}


def estimate(mode, target):
    """Seconds of measuring for PLAN[mode]. Full mode takes 24 pairs for the two goals
    whose intervals are widest (sequential faults, reclaim); quick mode forks three sizes,
    reads the child's VmPTE in the fork case and reclaims 64 MiB."""
    p = PLAN[mode]
    t = p["fork"] * SECONDS["fork"] * sum(p["sizes"]) / sum(FORK_MB)
    t += p["vmpte"] * SECONDS["vmpte"] + p["seq"] * SECONDS["seq"]
    t += p["rand"] * SECONDS["rand"] * p["writes"] / 20000 + p["server"] * SECONDS["server"]
    t += (p["reclaim"] + p["held"]) * SECONDS["reclaim"] * p["reclaim_mb"] / 256
    t += p["migrate"] * SECONDS["migrate"] * p["reclaim_mb"] / 256
    return int(t + 5)


def ratio_interval(rec):
    """COW / plain from a pairs record (pairstats.ratio()); None without pairs or with a
    value of 0 or less (nothing reclaimed, a failed read), which has no ratio."""
    if not rec or not rec.get("a") or any(x <= 0 for x in rec["a"] + rec["b"]):
        return None
    return pairstats.ratio(pairstats.regression(rec["a"], rec["b"]))


def fmt_ri(ri, digits=3, pairs=True):
    """The ratio and its interval, and with pairs its number of pairs."""
    if ri is None:
        return "–"
    est, lo, hi, n = ri
    if lo is None:
        return f"{est:.{digits}f} ({f'{n} pairs: ' if pairs else ''}too few for an interval)"
    return f"{est:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]" + (f" ({n} pairs)" if pairs
                                                                     else "")


def _fmt(r, scale=1.0, digits=2):
    return "–" if r is None else f"{r['median'] * scale:.{digits}f}"


def _ratio(a, b):
    return "–" if not a or not b or not a["median"] else f"{b['median'] / a['median']:.3f}"


def report(ctx):
    md = ["Upstream (v3 cover letter, QEMU, x86_64 defconfig): fork ~10 ms at 512 MB both "
          "ways; at 1 GB child VmPTE 2096 kB plain vs 44 kB COW PTE; sequential write fault "
          "after fork 0.000770 vs 0.000795 ms per access, random 0.000026 vs 0.000029 ms. "
          f"The On-demand-fork paper: fork {PAPER_FORK_SPEEDUP_1G}x faster at 1 GB.", "",
          "Ours: `bench/cow_pte` in the guests (TCG, so absolute times are far above "
          "upstream's; compare ratios). Private anonymous memory, 4 KiB pages "
          "(MADV_NOHUGEPAGE), populated; plain and COW PTE forks alternate (ABBA) in one "
          "process, so each repetition is a pair measured a moment apart on the same boot. "
          "The parent runs pinned and SCHED_FIFO, so a child cannot run (and exit) inside "
          "the timed fork; "
          "children inherit the pin and run on the parent's CPU once it sleeps. "
          "fork: parent-side time of fork(); the child's VmPTE is read right after it. "
          "VmPTE: /proc/PID/status right after fork. Faults: the child writes after fork, "
          "ns per write. Fork server: the parent forks, the child writes 4 pages and exits, "
          "20 times per sample. Reclaim: a process in its own cgroup v2 group populates the "
          "memory, forks children that write 4 pages and exit (with COW PTE the tables are "
          "shared and then left to the parent), then `memory.reclaim` of the group asks for "
          "all of it (swap: the guest's RAM disk); time of that write and MiB the group's "
          "`memory.current` fell. Reclaim, a child holding: the same while one more child "
          "lives and holds the memory (COW PTE: shares the tables). move_pages(): the "
          "memory gathered on node 0, a child forked that holds it, then the timed "
          "`move_pages(MPOL_MF_MOVE_ALL)` of all of it to node 1. On stock only the plain "
          "cases run.", ""]
    rows = []
    for target in ("stock", "patched"):
        for mb in FORK_MB:
            a = ctx.one(target=target, group="fork", mb=mb, backend="plain")
            b = ctx.one(target=target, group="fork", mb=mb, backend="cow_pte")
            if a or b:
                rows.append(f"| {target} | fork {mb} MiB (ms) | {_fmt(a, 1e-3, 3)} | "
                            f"{_fmt(b, 1e-3, 3)} | {_ratio(a, b)} | "
                            f"{'~10 / ~10' if mb == 512 else '–'} |")
        for grp, label, ups in (("vmpte-parent", "VmPTE parent 1 GiB (kB)", "2096 / 2096"),
                                ("vmpte-child", "VmPTE child 1 GiB (kB)", "2096 / 44")):
            a = ctx.one(target=target, group=grp, backend="plain")
            b = ctx.one(target=target, group=grp, backend="cow_pte")
            if not (a or b) and grp == "vmpte-child":
                a = ctx.one(target=target, group="fork-vmpte-child", mb=1024, backend="plain")
                b = ctx.one(target=target, group="fork-vmpte-child", mb=1024,
                            backend="cow_pte")
            if a or b:
                rows.append(f"| {target} | {label} | {_fmt(a, 1, 0)} | {_fmt(b, 1, 0)} | "
                            f"{_ratio(a, b)} | {ups} |")
        for grp, label, ups in (("fault-seq", "write fault, sequential 512 MiB (ns)",
                                 "770 / 795"),
                                ("fault-rand", "write, random sparse 512 MiB (ns)",
                                 "26 / 29")):
            a = ctx.one(target=target, group=grp, backend="plain")
            b = ctx.one(target=target, group=grp, backend="cow_pte")
            if a or b:
                rows.append(f"| {target} | {label} | {_fmt(a, 1, 0)} | {_fmt(b, 1, 0)} | "
                            f"{_ratio(a, b)} | {ups} |")
        a = ctx.one(target=target, group="server", backend="plain")
        b = ctx.one(target=target, group="server", backend="cow_pte")
        if a or b:
            rows.append(f"| {target} | fork server 1 GiB (execs/s) | {_fmt(a, 1, 1)} | "
                        f"{_fmt(b, 1, 1)} | {_ratio(a, b)} | 53.50 / 52.15 (AFL) |")
        for grp, label, digits in (("reclaim", "reclaim (ms)", 1),
                                   ("reclaimed", "reclaimed (MiB)", 1),
                                   ("reclaim-held", "reclaim, a child holding (ms)", 1),
                                   ("reclaimed-held", "reclaimed, a child holding (MiB)", 1)):
            a = ctx.one(target=target, group=grp, backend="plain")
            b = ctx.one(target=target, group=grp, backend="cow_pte")
            if a or b:
                mb = (a or b).get("mb")
                rows.append(f"| {target} | {label}, {mb} MiB, {(a or b).get('children')} "
                            f"children | {_fmt(a, 1, digits)} | {_fmt(b, 1, digits)} | "
                            f"{_ratio(a, b)} | – |")
        a = ctx.one(target=target, group="migrate", backend="plain")
        b = ctx.one(target=target, group="migrate", backend="cow_pte")
        if a or b:
            rows.append(f"| {target} | move_pages() {(a or b).get('mb')} MiB, a child "
                        f"holding (ms) | {_fmt(a, 1, 1)} | {_fmt(b, 1, 1)} | "
                        f"{_ratio(a, b)} | – |")
        for grp in ("reclaim", "reclaim-held", "migrate"):
            u = ctx.one(target=target, group=grp, case="unavailable")
            if u:
                rows.append(f"| {target} | {grp} | SKIP: {u.get('reason')} | | | |")
    md += ["| kernel | case | plain (median) | COW PTE (median) | COW / plain | "
           "upstream plain / COW |", "|---|---|---|---|---|---|"] + rows + [""]

    pair_rows = []
    for rec in ctx.find(target="patched", group="pairs", case="regression"):
        ri = ratio_interval(rec)
        pair_rows.append(f"| {rec.get('measure')} | {rec.get('mb')} MiB | {fmt_ri(ri)} |")
    level = f"{pairstats.LEVEL:.0%}"
    if pair_rows:
        md += [f"Paired ratios (patched guest; COW / plain of each pair, geometric mean of "
               f"the pairs' median, {level} bootstrap interval, `bench/pairstats.py`):", "",
               "| measure | size | COW / plain [interval] |", "|---|---|---|"]
        md += pair_rows + [""]

    md += [f"**Goals** (patched guest, paired; met when the whole {level} interval is on the "
           "goal's side, **NOT met** when all of it is on the other, not resolved when it "
           "straddles the goal or there are too few pairs; reclaim also needs COW to give "
           f"back at least {RECLAIMED_SHARE:.0%} of what plain does):", "",
           *goals_table(ctx), ""]
    return "\n".join(md)


def goals_table(ctx):
    """The goals table's lines: report() shows it, `bench/run.sh --write-docs` puts it in
    DOC."""
    rows = []
    for measure, mb, bound, at_least, words in GOALS:
        want = dict(target="patched", group="pairs", case="regression", measure=measure)
        if mb is not None:
            want["mb"] = mb
        # The fork case and the VmPTE case both give child VmPTE pairs: the most pairs.
        rec = max(ctx.find(**want), key=lambda r: len(r.get("a") or []), default=None)
        ri = ratio_interval(rec)
        v = pairstats.ratio_verdict(ri, bound, at_least)
        if measure in RECLAIMED and ri is not None:
            a = ctx.one(target="patched", group=RECLAIMED[measure], backend="plain")
            b = ctx.one(target="patched", group=RECLAIMED[measure], backend="cow_pte")
            if a and b and b["median"] < RECLAIMED_SHARE * a["median"]:
                v = (f"**NOT met**: COW gave back {b['median']:.1f} MiB, plain "
                     f"{a['median']:.1f}")
        if ri is None and ctx.one(target="patched", group=measure, case="unavailable"):
            v = "not measured (SKIP)"
        rows.append(f"| {words} | {fmt_ri(ri, pairs=False)} | {ri[3] if ri else '–'} | {v} |")
    return [f"| goal | COW / plain [{pairstats.LEVEL:.0%} interval] | pairs | verdict |",
            "|---|---|---|---|", *rows]
