# SPDX-License-Identifier: GPL-2.0
"""Real programs on COW page tables: Debian's redis-server saving a 1 GiB dataset
(BGSAVE) and AFL++ fuzzing a target that populates 1 GiB before its fork server starts,
each plainly and under bench/cowrun, in one patched guest booted on the Debian root
filesystem (scripts/vm.sh --rootfs); plainly alone in the stock guest, whose figures
stand beside the patched kernel's plain ones. Interface: see anon_names.py."""

import pairstats

KEY = "real_programs"
TITLE = "Real programs: Redis and AFL++ on COW page tables (`cowrun`, `PR_COW_PTE`)"
# COW and plain run side by side in the patched guest; stock runs plain alone.
TARGETS = ("stock", "patched")
DOC = "docs/results/real-programs.md"
DOC_TARGETS = ("patched",)
ROOTFS = True
# Two 1 GiB datasets to populate and fuzzing runs of fixed length do not fit the quick
# mode's budget (runner.QUICK_BUDGET); `bench/run.sh --quick --only real_programs` runs it.
QUICK = False
LONGER = 1

# Redis: keys x bytes (DEBUG POPULATE), pairs of BGSAVE rounds. AFL++: target MiB,
# seconds per fuzzing run, pairs of runs.
PLAN = {"quick": {"keys": 1000000, "size": 1024, "redis_pairs": 1,
                  "afl_mb": 1024, "afl_seconds": 60, "afl_pairs": 1},
        "full": {"keys": 1000000, "size": 1024, "redis_pairs": pairstats.MIN_PAIRS,
                 "afl_mb": 1024, "afl_seconds": 120, "afl_pairs": 3}}

# The goals, as COW / plain ratios of medians: (record group, bound, at_least, words).
GOALS = (("fork", 0.1, False, "Redis fork time at 1 GiB, COW / plain <= 0.1"),
         ("lat-p999", 1.0, False, "p99.9 write latency during BGSAVE, COW / plain <= 1"),
         ("rss-sum-peak", 1.0, False, "peak RSS during the save (server + child), "
          "COW / plain <= 1"),
         ("used-peak", 1.0, False, "peak memory used during the save (system, over "
          "the idle level), COW / plain <= 1"),
         ("execs", 5.0, True, "AFL++ execs/s on the 1 GiB target, COW / plain >= 5"))


def guest_mem(mode):
    # Two servers of ~1.2 GiB each, the save's copies, the fuzzer's 1 GiB target.
    return 5


def runs(mode, target):
    p = PLAN[mode]
    return [(f"redis BGSAVE {p['keys'] * p['size'] >> 20} MiB",
             ["real_redis.sh", "--keys", str(p["keys"]), "--size", str(p["size"]),
              "--runs", str(p["redis_pairs"])]),
            (f"afl++ {p['afl_mb']} MiB target",
             ["real_afl.sh", "--mb", str(p["afl_mb"]), "--seconds",
              str(int(p["afl_seconds"] * LONGER)), "--runs", str(p["afl_pairs"])])]


# Seconds under TCG with the benchmark kernels, loaded machine: populating one server
# (per million keys of 1 KiB), one BGSAVE round (with its second of settling), starting
# a fuzzer on the 1 GiB target (populating it, calibrating) beyond its fixed time.
SECONDS = {"populate": 60, "round": 40, "afl_start": 40}


def estimate(mode, target):
    p = PLAN[mode]
    kinds = 1 if target == "stock" else 2     # plain alone, or plain and COW
    mkeys = p["keys"] * p["size"] / (1 << 30)
    t = kinds * mkeys * (SECONDS["populate"] + p["redis_pairs"] * SECONDS["round"])
    t += kinds * p["afl_pairs"] * (p["afl_seconds"] * LONGER + SECONDS["afl_start"])
    return int(t + 10)


def ratio(ctx, group, bench=None):
    """COW / plain of the medians of a measure, with its pairs: (ratio, lo, hi, pairs);
    lo and hi None without an interval. None when not measured or plain's is not
    positive. A memory growth can be 0 or less for COW (nothing grew): a ratio of the
    medians then, with no interval."""
    a = ctx.one(target="patched", group=group, backend="plain")
    b = ctx.one(target="patched", group=group, backend="cow_pte")
    if not a or not b or a["median"] <= 0:
        return None
    rec = ctx.one(target="patched", group="pairs", case="regression", measure=group)
    if rec and rec.get("a") and all(x > 0 for x in rec["a"] + rec["b"]):
        return pairstats.ratio(pairstats.regression(rec["a"], rec["b"]))
    return b["median"] / a["median"], None, None, a.get("runs", 0)


def verdict(ri, bound, at_least):
    """met / **NOT met** on the interval when there is one; otherwise on the point
    estimate, saying so."""
    if ri is None:
        return "not measured"
    est, lo, hi, n = ri
    if lo is None:
        ok = est >= bound if at_least else est <= bound
        return (f"{'met' if ok else '**NOT met**'} on the point estimate ({n} pair"
                f"{'s' if n != 1 else ''}: too few for an interval)")
    return pairstats.ratio_verdict(ri, bound, at_least)


def fmt_ri(ri):
    if ri is None:
        return "–"
    est, lo, hi, _ = ri
    return f"{est:.3f}" if lo is None else f"{est:.3f} [{lo:.3f}, {hi:.3f}]"


# Redis rows: group, label, scale, digits.
REDIS_ROWS = (("fork", "fork (latest_fork_usec, ms)", 1e-3, 2),
              ("bgsave-rtt", "BGSAVE command round trip (ms)", 1e-3, 2),
              ("save", "save duration (s)", 1, 1),
              ("lat-p50", "write latency during the save, p50 (ms)", 1e-3, 3),
              ("lat-p99", "… p99 (ms)", 1e-3, 2),
              ("lat-p999", "… p99.9 (ms)", 1e-3, 2),
              ("lat-worst", "… worst (ms)", 1e-3, 1),
              ("rss-peak", "server VmRSS, peak during the save (MiB)", 1 / 1024, 0),
              ("rss-sum-peak", "server + child VmRSS, peak (MiB)", 1 / 1024, 0),
              ("child-vmpte-first", "child VmPTE just after the fork (kB)", 1, 0),
              ("child-vmpte", "child VmPTE, peak during the save (kB)", 1, 0),
              ("cow-size", "copied-on-write per Redis (rdb_last_cow_size, MiB)", 1, 1),
              ("used-peak", "system memory used over idle, peak (MiB)", 1 / 1024, 0),
              ("used-after", "… one second after the save (MiB)", 1 / 1024, 0),
              ("rss-after", "server VmRSS one second after the save (MiB)", 1 / 1024, 0))


def _med(r, scale, digits):
    return "–" if r is None else f"{r['median'] * scale:.{digits}f}"


def _rdb(rdb, who, same=""):
    """The RDB check's sentence for one guest's record, without its end."""
    return (f"RDB check{who}: record checksum `{rdb.get('sum')}`{same} "
            f"{'identical in all' if rdb.get('same') else '**NOT identical** across the'} "
            f"{rdb.get('runs')} saves; all saves "
            f"{'succeeded' if rdb.get('saves_ok') else '**did not succeed**'}")


def _plot(ctx):
    import matplotlib.pyplot as plt
    panels = [("Redis fork (ms)", [("fork", 1e-3)]),
              ("write latency in BGSAVE (ms)", [("lat-p50", 1e-3), ("lat-p99", 1e-3),
                                                ("lat-p999", 1e-3), ("lat-worst", 1e-3)]),
              ("memory peak in BGSAVE (MiB)", [("rss-sum-peak", 1 / 1024),
                                               ("used-peak", 1 / 1024)]),
              ("AFL++ execs/s, 1 GiB target", [("execs", 1)])]
    fig, axes = plt.subplots(1, len(panels), figsize=(14, 3.4))
    drawn = False
    for ax, (title, groups) in zip(axes, panels):
        labels = [g.replace("lat-", "").replace("-peak", "") for g, _ in groups]
        here = False
        for i, (backend, colour) in enumerate((("plain", "tab:gray"), ("cow_pte", "tab:blue"))):
            vals = []
            for g, scale in groups:
                r = ctx.one(target="patched", group=g, backend=backend)
                vals.append(max(r["median"] * scale, 0) if r else 0)
            here |= any(vals)
            ax.bar([x + i * 0.4 for x in range(len(groups))], vals, 0.4, color=colour,
                   label="COW page tables" if backend == "cow_pte" else "plain fork")
        ax.set_xticks([x + 0.2 for x in range(len(groups))], labels)
        ax.set_title(title, fontsize=9)
        # Percentiles span orders of magnitude.
        if title.startswith("write") and here:
            ax.set_yscale("log")
        drawn |= here
    axes[0].legend(fontsize=8)
    if not drawn:
        plt.close(fig)
        return None
    return ctx.plot(fig, "real_programs.png", "Redis and AFL++, plain fork against COW "
                    "page tables")


def report(ctx):
    p = dict(PLAN[ctx.mode])
    # The sizes that ran (a run by hand may differ from the plan).
    fork = ctx.one(target="patched", group="fork", backend="plain")
    if fork and fork.get("keys"):
        p.update(keys=fork["keys"], size=fork["size"])
    afl = ctx.one(target="patched", group="execs", backend="plain")
    if afl and afl.get("mb"):
        p["afl_mb"] = afl["mb"]
    md = ["Debian 12's own `redis-server` and `afl-fuzz`, unmodified, in the guests booted "
          "on the Debian root filesystem (`scripts/mkrootfs.sh`, `vm.sh --rootfs`). "
          "The COW runs start the program under `bench/cowrun`, the one prefix: "
          "`mmext run --cow-pte --` where the CLI and kernel pass the opt-in across exec, "
          "else an LD_PRELOAD shim (`bench/cow_pte_preload.c`) that makes the program "
          "itself call `prctl(PR_COW_PTE)` before `main()`; the plain runs are the same "
          "programs without it, in the same boot; the stock guest runs them plainly "
          "alone.", "",
          f"**Redis** (`bench/real_redis.sh`, `bench/redis_save.c`): two servers, plain and "
          f"COW (the stock guest: the plain one alone), each populated with {p['keys']:,} "
          f"keys of {p['size']} bytes (`DEBUG POPULATE`); BGSAVE rounds alternate between "
          "them (ABBA). During each round one "
          "client writes without pause over the Unix socket, storing the value each key "
          "already has (so every write replaces the value's memory, as an update does, and "
          "the data never changes); latency is per write, from half a second before the "
          "BGSAVE to the end of the save; memory is sampled every 20 ms. The RDB check: "
          "a checksum of the saved records, independent of their order and of the header "
          "(creation time), must be the same in every save of both servers, and the "
          "servers' `DEBUG DIGEST` the same before and after the rounds.", ""]
    for t in ("stock", "patched"):
        u = ctx.one(target=t, group="redis", case="unavailable")
        if u:
            md += [f"Redis ({t}): SKIP: {u.get('reason')}", ""]
    rows = []
    for g, label, scale, digits in REDIS_ROWS:
        s = ctx.one(target="stock", group=g, backend="plain")
        a = ctx.one(target="patched", group=g, backend="plain")
        b = ctx.one(target="patched", group=g, backend="cow_pte")
        if s or a or b:
            ri = ratio(ctx, g)
            rows.append(f"| {label} | {_med(s, scale, digits)} | {_med(a, scale, digits)} | "
                        f"{_med(b, scale, digits)} | {fmt_ri(ri)} |")
    if rows:
        n = (ctx.one(target="patched", group="fork", backend="plain")
             or ctx.one(target="stock", group="fork", backend="plain") or {}).get("runs", 0)
        md += [f"Medians of {n} round{'s' if n != 1 else ''} each (the stock kernel has "
               "no COW page tables: its server forks plainly):", "",
               "| measure | stock kernel | patched, plain fork | patched, COW page tables "
               "| COW / plain |", "|---|---|---|---|---|"] + rows + [""]
    rdb = ctx.one(target="patched", group="rdb", case="checksum")
    if rdb:
        md += [_rdb(rdb, "") + f"; dataset digests "
               f"{'identical' if rdb.get('digests_same') else '**differ**'} "
               f"(`{str(rdb.get('digest_plain'))[:16]}…`).", ""]
    srdb = ctx.one(target="stock", group="rdb", case="checksum")
    if srdb:
        same = ("" if not rdb else " (the patched guest's)" if rdb.get("sum") == srdb.get("sum")
                else " (**not** the patched guest's)")
        md += [_rdb(srdb, ", stock kernel", same) + ".", ""]

    md += [f"**AFL++** (`bench/real_afl.sh`, `bench/afl_target.c`, built with Debian's "
           f"`afl-cc`): the target maps and writes {p['afl_mb']} MiB (4 KiB pages) and then "
           "starts the deferred fork server (`__AFL_INIT`), so each execution forks the "
           f"populated process. `afl-fuzz -V {int(p['afl_seconds'] * LONGER)}` from one "
           "seed input with a fixed random seed, plain and COW in alternation; the "
           "target reports its fork server's `PR_COW_PTE` state, which must be on in the "
           "COW runs.", ""]
    for t in ("stock", "patched"):
        u = ctx.one(target=t, group="afl", case="unavailable")
        if u:
            md += [f"AFL++ ({t}): SKIP: {u.get('reason')}", ""]
    arows = []
    for t in ("stock", "patched"):
        for r in sorted(ctx.find(target=t, group="afl-run"),
                        key=lambda r: (r.get("run", 0), r.get("backend") != "plain")):
            arows.append(f"| {t} | {r.get('run')} | {r.get('backend')} | "
                         f"{r.get('execs_per_sec')} | {r.get('execs')} | {r.get('corpus')} "
                         f"({r.get('found')} found) | {r.get('edges')} | {r.get('cow_state')} |")
    if arows:
        md += ["| kernel | run | fork | execs/s | execs | corpus (found) | edges | fork "
               "server COW state |", "|---|---|---|---|---|---|---|---|"] + arows + [""]
        for g, label in (("execs", "execs/s"), ("paths", "corpus")):
            ri = ratio(ctx, g)
            if ri:
                md.append(f"AFL++ {label}, COW / plain: {fmt_ri(ri)}.")
        md.append("")

    md += ["**Goals** (COW / plain; with enough pairs the paired estimate and its "
           f"{pairstats.LEVEL:.0%} interval, `bench/pairstats.py`, else the ratio of the "
           "medians):", "", *goals_table(ctx), ""]
    try:
        img = _plot(ctx)
    except Exception as e:  # a plot must not cost the tables
        img = f"(plot failed: {e!r})"
    if img:
        md += [img, ""]
    return "\n".join(md)


def goals_table(ctx):
    """The goals table's lines: report() shows it, `bench/run.sh --write-docs` puts it in
    DOC."""
    p, rows = PLAN[ctx.mode], []
    for g, bound, at_least, words in GOALS:
        ri = ratio(ctx, g)
        mb = p["afl_mb"] if g == "execs" else p["keys"] * p["size"] >> 20
        if mb != 1024:
            words = words.replace("1 GiB", f"{mb} MiB")
        rows.append(f"| {words} | {fmt_ri(ri)} | {verdict(ri, bound, at_least)} |")
    return ["| goal | COW / plain | verdict |", "|---|---|---|", *rows]
