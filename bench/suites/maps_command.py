# SPDX-License-Identifier: GPL-2.0
"""Maps command: the mmext maps command against procps pmap at 60,000 VMAs, and against one
bare read(2) pass over the maps text. Interface: see anon_names.py."""

import pairstats

KEY = "maps_command"
TITLE = "Maps command: `mmext maps` against `pmap` at 60,000 VMAs"
TARGETS = ("host", "stock", "patched")

# Interleaved rounds of (mmext maps, pmap, read pass) per target; 0: not run. Under TCG a
# round costs seconds, so the quick mode measures the host only.
ROUNDS = {"quick": {"host": pairstats.MIN_PAIRS, "guest": 0},
          "full": {"host": 41, "guest": 15}}
# Seconds per round and around the rounds (the target's VMAs, the untimed round): on the
# host, measured on the 2-core machine while it built kernels (pmap ~0.1-0.2 s, mmext
# ~0.05 s, the read pass ~0.03 s); under TCG a guess of ten times that (vma_lookup's
# listings there take 6-10 times the host's), which the runner's printed times check.
PER_ROUND = {"host": 0.3, "guest": 3.0}
AROUND = {"host": 0.5, "guest": 8.0}
# The goals, on B/A of the pairs: (label, pair record's backend, at most this ratio,
# shown as a speed-up).
GOALS = (("CPU time (user + sys): `mmext maps` ≥ 5× less than `pmap`", "mmext/pmap",
          1 / 5, True),
         ("wall time: `mmext maps` ≤ 1.3× one bare read(2) pass", "mmext/read", 1.3, False))
# Each side's medians, by pair record backend: (b, a) as (case, backend, name).
SIDES = {"mmext/pmap": (("cpu mmext maps", "mmext", "mmext maps CPU"),
                        ("cpu pmap", "pmap", "pmap CPU")),
         "mmext/read": (("wall mmext maps", "mmext", "mmext maps wall"),
                        ("wall read(2) pass", "read", "floor, read(2) pass wall"))}


def _where(target):
    return "host" if target == "host" else "guest"


def runs(mode, target):
    n = ROUNDS[mode][_where(target)]
    return [("maps_command 60k", ["maps_command", "--vmas", "60000", "--runs", str(n)])] \
        if n else []


def estimate(mode, target):
    n, w = ROUNDS[mode][_where(target)], _where(target)
    return int(n * PER_ROUND[w] + AROUND[w]) if n else 0


def _ms(x):
    return "–" if x is None else f"{x:.1f} ms" if x >= 10 else f"{x:.2f} ms"


def goal_rows(ctx, target):
    rows = []
    for label, backend, at_most, speedup in GOALS:
        rec = ctx.one(target=target, group="maps_command", case="regression", backend=backend)
        if not rec:
            rows.append(f"| {target} | {label} | – | – | – | – | not measured |")
            continue
        med = {}
        for k, (case, b, name) in zip("ba", SIDES[backend]):
            r = ctx.one(target=target, group="maps_command", case=case, backend=b)
            med[k] = f"{name}: {_ms(r['median'] if r else None)}"
        try:
            reg = pairstats.regression(rec["a"], rec["b"])
        except ValueError as e:
            rows.append(f"| {target} | {label} | {med['b']} | {med['a']} | – | – | "
                        f"not measured ({e}) |")
            continue
        fig, ci = pairstats.fmt_times(reg, speedup)
        rows.append(f"| {target} | {label} | {med['b']} | {med['a']} | {fig} | {ci} | "
                    f"**{pairstats.verdict(reg, 100 * (at_most - 1))}** "
                    f"({reg['pairs']} pairs) |")
    return rows


def report(ctx):
    targets = [t for t in TARGETS if ctx.find(target=t, group="maps_command")]
    plan = ", ".join(f"{t} {ROUNDS[ctx.mode][_where(t)]}" for t in TARGETS
                     if ROUNDS[ctx.mode][_where(t)])
    md = ["`bench/maps_command`: a target process with 60,000 one-page VMAs of alternating "
          "protection (so they cannot merge; the default `vm.max_map_count` of 65530 leaves "
          "room for its own mappings) is listed by `mmext maps PID` and by procps' `pmap "
          "PID`, and read once with read(2) (64 KiB at a time) by the benchmark itself. "
          "Plain `pmap PID` is the comparable listing: start, size, permissions and name "
          "per VMA from `/proc/PID/maps`, as `mmext maps` prints; `pmap -x` adds RSS and "
          "dirty from `smaps`, the counterpart of `mmext maps --rss`. A command's CPU "
          "time is user + sys of the child from `wait4()`; its wall time runs from the "
          "spawn to the reaping, so it includes starting the program, which the read pass, "
          "timed in the benchmark's own process, does not: a strict floor. The three run "
          "once per round in a rotating order, after an untimed round that counts the "
          "listings' lines; rounds per target: " + (plan or "none") +
          (" (the quick mode measures the host only: under TCG a round takes seconds)"
           if ctx.mode == "quick" else "") + ".", ""]
    if not targets:
        return "\n".join(md + ["No results."])
    md += ["| kernel | VMAs | PROCMAP_QUERY | mmext maps: lines | pmap: lines | "
           "mmext maps CPU / wall | pmap CPU / wall | read(2) pass CPU / wall |",
           "|---|---|---|---|---|---|---|---|"]
    for t in targets:
        def get(case, b):
            r = ctx.one(target=t, group="maps_command", case=case, backend=b)
            return r["median"] if r else None
        info = ctx.one(target=t, group="maps_command", case="cpu mmext maps") or {}
        ioctl = {True: "yes", False: "no"}.get(info.get("procmap_query"), "?")
        cells = [f"{_ms(get('cpu ' + k, b))} / {_ms(get('wall ' + k, b))}"
                 for k, b in (("mmext maps", "mmext"), ("pmap", "pmap"),
                              ("read(2) pass", "read"))]
        n = {k: info.get(k) for k in ("vmas", "mmext_lines", "pmap_lines")}
        n = {k: "–" if not isinstance(v, int) or v < 0 else f"{v:,}" for k, v in n.items()}
        md.append(f"| {t} | {n['vmas']} | {ioctl} | {n['mmext_lines']} | {n['pmap_lines']} | "
                  + " | ".join(cells) + " |")
    md += ["", "Medians; the commands' lines are the VMAs plus headers and a total. "
           "`mmext maps` runs with its default backend (auto), which lists by parsing the "
           "text and keeps PROCMAP_QUERY for lookups. "
           "**Goals**, each on the pairs of its rounds: the figure is the median of the "
           f"pairs' ratios, with its {pairstats.LEVEL:.0%} bootstrap interval; the verdict "
           "is \"met\" or \"NOT met\" when the whole interval is on one side of the goal, "
           "else \"not resolved\".", "",
           "| kernel | goal | ours (median) | reference (median) | ratio | interval | "
           "verdict |", "|---|---|---|---|---|---|---|"]
    for t in targets:
        md += goal_rows(ctx, t)
    walls = []
    for t in targets:
        rec = ctx.one(target=t, group="maps_command", case="regression",
                      backend="mmext/pmap wall")
        if rec:
            fig, ci = pairstats.fmt_times(pairstats.regression(rec["a"], rec["b"]), True)
            walls.append(f"{t} {fig} ({ci})")
    if walls:
        md += ["", "Not a goal: wall time of `pmap` over `mmext maps`, from the same pairs: " +
               "; ".join(walls) + "."]
    return "\n".join(md)
