# SPDX-License-Identifier: GPL-2.0
"""Anonymous VMA names: fork() of a process with many anonymous VMAs, unnamed against
named.

A suite module gives bench/runner.py:
  KEY                    the suite's feature key: its file name, the records' "suite",
                         the name --only takes
  TITLE                  the report section's heading, led by the feature's name
  TARGETS                which of host/stock/patched it runs on
  runs(mode, target)     [(label, argv)]: argv[0] a program (or script) of build/bench
  estimate(mode, target) seconds of measuring, for the up-front estimate
  guest_mem(mode)        optional: GiB the guest needs (default 3)
  ROOTFS                 optional: True to run in a guest on the Debian root filesystem
                         (scripts/vm.sh --rootfs), booted apart from the others
  QUICK                  optional: False when the suite does not fit a quick run, which
                         then leaves it out unless --only names it
  report(ctx)            the Markdown section (ctx: see runner.Context)
  DOC                    optional: the docs/results file whose goals block
                         (`<!-- bench:KEY goals -->` to `<!-- end bench:KEY goals -->`)
                         `bench/run.sh --write-docs` rewrites; with it:
  DOC_TARGETS            the targets whose results that table needs
  goals_table(ctx)       the goals table's lines, which report() shows too
  LONGER                 set by the runner (--longer N, default 1): a suite whose cases
                         are bounded in time measures N times longer
"""

import pairstats

KEY = "anon_names"
TITLE = "Anonymous VMA names: fork() with named VMAs (`PR_SET_VMA_ANON_NAME`)"
TARGETS = ("host", "stock", "patched")
LONGER = 1

SCENARIOS = ((0, "unpopulated"), (1, "1 page of data"), (10, "10 pages of data"))
# Upstream's averages (the anonymous VMA names series, ms: unnamed, named, regression %)
# after its refcounting patch, and before it (names copied with strdup).
UPSTREAM_REFCOUNT = {0: (16.36, 18.35, 12.16), 1: (48.16, 51.30, 6.52),
                     10: (64.23, 67.69, 5.39)}
UPSTREAM_STRDUP = {0: (16.73, 23.34, 39.51), 1: (51.98, 59.94, 15.31),
                   10: (66.86, 76.31, 14.13)}

# Per (VMAs, pages): seconds of timed pairs, at most this many pairs, rounds (the two
# processes swap roles between rounds), warm-up forks per process and round. The time
# bounds the run; the pair cap only stops a fast machine from collecting thousands.
PLAN = {
    "quick": {(4000, 0): (4, 400, 2, 2), (4000, 10): (4, 400, 2, 2),
              (64000, 0): (16, 400, 2, 1)},
    "full": {(4000, 0): (15, 1000, 2, 3), (4000, 1): (15, 1000, 2, 3),
             (4000, 10): (15, 1000, 2, 3), (64000, 0): (60, 1000, 2, 2),
             (64000, 1): (60, 1000, 2, 2), (64000, 10): (90, 1000, 2, 1)},
}
# The host runs the guests' cases, A/A (no CONFIG_ANON_VMA_NAME there), at native speed.
HOST_SECONDS = {"quick": 3, "full": 8}
# Seconds per VMA around the timed pairs under TCG with the benchmark kernels, by pages
# per VMA: building both processes, naming, warm-up, tearing down; and of one pair (the
# one that runs past the time, and the minimum pairs); see __init__.py. Upper figures:
# on a loaded machine building and naming 64,000 VMAs takes a guest up to 4 times as
# long (16-19 s against 3-5 s), and of two guests the one that shares the machine more
# is the slower (1-17 s against 5-40 s by case).
TCG_AROUND = {0: 2.4e-4, 1: 4e-4, 10: 1e-3}
TCG_PAIR = {0: 7e-6, 1: 1.5e-5, 10: 4e-5}
HOST_AROUND = {0: 2e-5, 1: 5e-5, 10: 2.5e-4}


def _cases(mode, target):
    plan = dict(PLAN[mode])
    if target == "host":
        plan = {k: (HOST_SECONDS[mode], 4000, 2, 3) for k in plan}
    return {k: (int(sec * LONGER), int(n * LONGER), rounds, warm)
            for k, (sec, n, rounds, warm) in plan.items()}


def guest_mem(mode):
    # 64000 VMAs x 10 pages is 2.5 GiB of data per process, two processes: only the
    # full mode runs it, in 6 GiB.
    return 6 if (64000, 10) in PLAN[mode] else 3


def runs(mode, target):
    # At least enough pairs per round for an interval, even when the time runs out.
    return [(f"{vmas} VMAs x {pages} pages",
             ["fork_named", "--vmas", str(vmas), "--pages", str(pages), "--seconds", str(sec),
              "--runs", str(n), "--rounds", str(rounds), "--warmup", str(warm),
              "--min-pairs", str(pairstats.MIN_PAIRS)])
            for (vmas, pages), (sec, n, rounds, warm) in _cases(mode, target).items()]


def estimate(mode, target):
    t = 0
    for (vmas, pages), (sec, n, rounds, warm) in _cases(mode, target).items():
        if target == "host":
            t += sec + vmas * HOST_AROUND[pages]
        else:
            pairs = max(sec, rounds * pairstats.MIN_PAIRS * vmas * TCG_PAIR[pages])
            t += pairs + vmas * (TCG_AROUND[pages] + rounds * TCG_PAIR[pages])
    return int(t)


def _pct(x):
    return "–" if x is None else f"{x:+.1f}%"


def _ms(r, k="mean"):
    return "–" if r is None else f"{r[k]:.2f}"


def _paired(rec):
    """The paired regression of a "regression" record, or None (an older results.json)."""
    if not rec or not rec.get("a"):
        return None
    return pairstats.regression(rec["a"], rec["b"], rec.get("round_pairs"))


def report(ctx):
    md = ["Upstream's test: a process with 64K anonymous VMAs, each named with the longest "
          "name in the named case, forks; the child exits at once; the parent's fork() is "
          "timed. Upstream's published averages (ARM64 Android device, 2.4 GHz, 1000 forks "
          "per case):", "",
          "| scenario | unnamed | named | regression | (before refcounting: unnamed, named, "
          "regression) |", "|---|---|---|---|---|"]
    for p, name in SCENARIOS:
        u, n, r = UPSTREAM_REFCOUNT[p]
        su, sn, sr = UPSTREAM_STRDUP[p]
        md.append(f"| {name} | {u:.2f} ms | {n:.2f} ms | +{r:.2f}% | {su:.2f}, {sn:.2f} ms, "
                  f"+{sr:.2f}% |")
    level = f"{pairstats.LEVEL:.0%}"
    md += ["", "Ours: `bench/fork_named`. Two processes build the same VMAs once (they "
           "alternate read-write and read-only so they never merge; data is random); one "
           "gives each VMA a distinct 79-byte name. They fork in turn, in pairs ordered AB, "
           "BA, AB, …, so the forks of a pair are a moment apart and the drift of a shared "
           "machine (and of TCG) hits both alike; the regression is read from the per-pair "
           "ratios named/unnamed. Two processes differ by a few percent on their own (an "
           "A/A run on the host showed −6% to +2% with tight intervals), so the run has two "
           "rounds and the processes swap roles between them (one drops its names while "
           "the other takes them): each process's bias enters once upwards and once "
           "downwards. **Paired regression** = geometric mean of the two rounds' median "
           f"ratios − 1, with a {level} bootstrap interval (pairs resampled within each "
           "round; `bench/pairstats.py`). Each round starts with untimed warm-up forks and "
           "is bounded in time, so a slow machine gets fewer pairs rather than a longer "
           "run. Both processes are pinned to CPU 0 and run SCHED_FIFO while their "
           "children run as normal tasks, so a child cannot run, exit and unmap everything "
           "before fork() returns in the parent; the child is reaped outside the timed "
           "interval. 64,000 VMAs rather than 65,536: the default `vm.max_map_count` is "
           "65,530 and we change no sysctl. Times in ms; the means, medians and spreads "
           "describe each case on its own, unpaired.", ""]
    skipped = [f"{v:,} VMAs × {p} page{'s' if p != 1 else ''}" for v, p in PLAN["full"]
               if (v, p) not in PLAN[ctx.mode]]
    if skipped:
        md += [f"*{ctx.mode.capitalize()} mode* skips {' and '.join(skipped)} (64,000 × 10 "
               "pages is 2 × 2.5 GiB of data and seconds per fork under TCG; the full mode "
               "runs it in a 6 GiB guest) and times each case for a shorter while, so its "
               "intervals are wider.", ""]
    goal_rows, plot = [], {}
    for target in ("host", "stock", "patched"):
        rows, aa = [], False
        for vmas in (64000, 4000):
            for p, name in SCENARIOS:
                u = ctx.one(target=target, case="unnamed", vmas=vmas, pages=p)
                n = (ctx.one(target=target, case="named", vmas=vmas, pages=p)
                     or ctx.one(target=target, case="unnamed-b", vmas=vmas, pages=p))
                if not u:
                    continue
                rec = ctx.one(target=target, case="regression", vmas=vmas, pages=p)
                aa = aa or bool(rec and rec.get("aa")) or (n or {}).get("case") == "unnamed-b"
                reg = _paired(rec)
                rm = 100 * (n["mean"] / u["mean"] - 1) if n else None
                ups = UPSTREAM_REFCOUNT[p][2]
                if vmas == 64000 and target != "host":
                    v = pairstats.verdict(reg, ups) if not aa else "not measured (A/A)"
                    goal_rows.append((target, name, reg, rm, ups, v))
                    plot[(target, p)] = (u, n, reg)
                runs = f"{u['runs']}" + (f" + {n['runs']}" if n else "")
                nspread = f"{n['p10']:.2f}–{n['p90']:.2f}" if n else "–"
                # Upstream measured 4000 VMAs only in words: "at the noise level".
                upscol = f"+{ups:.1f}%" if vmas == 64000 else "noise level"
                rows.append(f"| {vmas} | {name} | {_ms(u)} | {_ms(n)} | {_pct(rm)} | "
                            f"{_ms(u, 'median')} | {_ms(n, 'median')} | "
                            f"{pairstats.fmt(reg)} | {u['p10']:.2f}–{u['p90']:.2f} | "
                            f"{nspread} | {runs} | {upscol} |")
        if not rows:
            continue
        what = {"host": f"host ({ctx.meta['host']['kernel']}, native)",
                "stock": "stock 6.12 guest", "patched": "patched 6.12 guest"}[target]
        second = "named"
        if aa:
            # No names (the hosts lack CONFIG_ANON_VMA_NAME): the same design with both
            # processes unnamed shows what the pairing reads when there is no effect.
            what += (": no VMA names on this kernel, so both processes stay unnamed; an "
                     "A/A run, whose paired figure should be near 0 with 0 inside the "
                     "interval")
            second = "second unnamed"
        md += [f"**{what}**", "",
               f"| VMAs | scenario | unnamed mean | {second} mean | regression (mean) | "
               f"unnamed median | {second} median | paired regression [{level} interval] | "
               f"unnamed p10–p90 | {second} p10–p90 | forks (unnamed + {second}) | "
               "upstream's regression |",
               "|---|---|---|---|---|---|---|---|---|---|---|---|"] + rows + [""]

    md += ["**Goal: the named-VMA regression no larger than upstream's (64,000 VMAs).** "
           f"Judged on the paired regression's {level} interval: *met* when all of it lies "
           "at or below upstream's figure, *NOT met* when all of it lies above, *not "
           "resolved* when it straddles the figure (this many pairs on this machine cannot "
           "tell). Stock and patched run the same naming and fork code (the queue does not "
           "touch them), so their two figures are also a check of each other.", "",
           f"| kernel | scenario | ours (paired) [{level} interval] | ours (mean, unpaired) "
           "| pairs | upstream's (mean) | goal |", "|---|---|---|---|---|---|---|"]
    for t, name, reg, rm, ups, v in goal_rows:
        md.append(f"| {t} | {name} | {pairstats.fmt(reg)} | {_pct(rm)} | "
                  f"{reg['pairs'] if reg else '–'} | +{ups:.1f}% | "
                  f"{'**NOT met**' if v == 'NOT met' else v} |")
    verdicts = [g[5] for g in goal_rows]
    met = sum(v == "met" for v in verdicts)
    failed = sum(v == "NOT met" for v in verdicts)
    if not verdicts:
        verdict = "not measured"
    elif met == len(verdicts):
        verdict = "met in every measured kernel and scenario"
    elif failed:
        verdict = (f"**NOT met** in {failed} of {len(verdicts)} kernel/scenario pairs "
                   f"({met} met, the rest not resolved)")
    else:
        verdict = (f"not resolved: met in {met} of {len(verdicts)} kernel/scenario pairs; "
                   "for the others the interval straddles upstream's figure or there were "
                   "too few pairs for one")
    missing = [f"{t}: {name}" for t in ("stock", "patched") for p, name in SCENARIOS
               if (t, p) not in plot]
    md += ["", f"Goal {verdict}" + (f" (not measured: {'; '.join(missing)})" if missing
                                    else "") + ".", ""]

    # Patched against stock: our queue must not slow fork down. Different boots, so
    # unpaired: read it with the spreads above in mind.
    ps = []
    for vmas in (64000, 4000):
        for p, name in SCENARIOS:
            for case in ("unnamed", "named"):
                a = ctx.one(target="stock", case=case, vmas=vmas, pages=p)
                b = ctx.one(target="patched", case=case, vmas=vmas, pages=p)
                if a and b:
                    ps.append(f"| {vmas} | {name} | {case} | {b['mean'] / a['mean']:.3f} | "
                              f"{b['median'] / a['median']:.3f} |")
    if ps:
        md += ["**Patched / stock** (same guest setup, separate boots, so unpaired; 1.000 = "
               "no change):", "", "| VMAs | scenario | case | mean ratio | median ratio |",
               "|---|---|---|---|---|"] + ps + [""]

    if plot:
        md += [_plot(ctx, plot), ""]
    return "\n".join(md)


def _plot(ctx, plot):
    import matplotlib.pyplot as plt
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.2))
    scen = [p for p, _ in SCENARIOS]
    labels = [n for _, n in SCENARIOS]
    w = 0.2
    for i, (t, case) in enumerate([("stock", 0), ("stock", 1), ("patched", 0),
                                   ("patched", 1)]):
        ys = [plot[(t, p)][case]["mean"] if (t, p) in plot and plot[(t, p)][case] else 0
              for p in scen]
        a1.bar([x + (i - 1.5) * w for x in range(len(scen))], ys, w,
               label=f"{t} {'named' if case else 'unnamed'}")
    for x, p in enumerate(scen):
        if not any((t, p) in plot for t in ("stock", "patched")):
            a1.text(x, 0, "not run", ha="center", va="bottom", fontsize=8)
            a2.text(x, 0, "not run", ha="center", va="bottom", fontsize=8)
    a1.set_xticks(range(len(scen)), labels)
    a1.set_ylabel("mean fork() time, ms (TCG)")
    a1.set_title("64,000 VMAs: fork() time in the guests")
    a1.legend(fontsize=8)
    series = [("upstream, strdup", [UPSTREAM_STRDUP[p][2] for p in scen], None),
              ("upstream, refcounted", [UPSTREAM_REFCOUNT[p][2] for p in scen], None)]
    for t in ("stock", "patched"):
        regs = [plot[(t, p)][2] if (t, p) in plot else None for p in scen]
        ys = [r["pct"] if r else 0 for r in regs]
        # Error bars: the interval, where there is one.
        err = [[r["pct"] - r["lo"] if r and r["lo"] is not None else 0 for r in regs],
               [r["hi"] - r["pct"] if r and r["hi"] is not None else 0 for r in regs]]
        series.append((f"ours, {t} (paired)", ys, err))
    for i, (name, ys, err) in enumerate(series):
        a2.bar([x + (i - 1.5) * w for x in range(len(scen))], ys, w, label=name,
               yerr=err, capsize=3 if err else 0)
    a2.axhline(0, color="black", linewidth=0.6)
    a2.set_xticks(range(len(scen)), labels)
    a2.set_ylabel(f"named vs unnamed, % ({pairstats.LEVEL:.0%} interval)")
    a2.set_title("Regression from naming, 64,000 VMAs")
    a2.legend(fontsize=8)
    return ctx.plot(fig, "anon_names.png", "fork times and regressions")
