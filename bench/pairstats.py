# SPDX-License-Identifier: GPL-2.0
"""Paired A/B statistics: per-pair ratios B/A, their median per round, and a bootstrap
confidence interval for the rounds' geometric mean; the verdict of a "no larger than" goal.

Each pair is two runs a moment apart, so drift (a busy neighbour, host frequency, a TCG
translation cache warming up) scales both and cancels in the ratio; the median keeps one
descheduled run from moving the figure. Rounds are for designs where two processes swap
roles (bench/fork_named.c): each process's own bias enters one round's ratio upwards and
the next one's downwards, so the rounds get equal weight whatever their pair counts.

    bench/pairstats.py FILE...   (fork_named, refpage or vma_lookup --lockless ab output: --json
                                  FILE, or console or output.log text)
"""

import json
import math
import random
import statistics
import sys

LEVEL = 0.95
RESAMPLES = 4000
# Below this many pairs a percentile bootstrap of a median is too coarse to trust.
MIN_PAIRS = 10


def ratios(a, b):
    if len(a) != len(b):
        raise ValueError(f"unpaired: {len(a)} A runs, {len(b)} B runs")
    if any(x <= 0 for x in a):
        raise ValueError("an A run of 0 or less: no ratio")
    return [y / x for x, y in zip(a, b)]


def split(values, round_pairs):
    """values cut into rounds of round_pairs[i] each (None: one round)."""
    if round_pairs is None:
        return [values]
    if sum(round_pairs) != len(values) or any(n < 1 for n in round_pairs):
        raise ValueError(f"rounds {round_pairs} do not add up to {len(values)} pairs")
    out, i = [], 0
    for n in round_pairs:
        out.append(values[i:i + n])
        i += n
    return out


def estimate(rounds):
    """Geometric mean of the rounds' median ratios."""
    return math.exp(sum(math.log(statistics.median(r)) for r in rounds) / len(rounds))


def estimate_ci(rounds, level=LEVEL, resamples=RESAMPLES, seed=0):
    """Percentile bootstrap interval of estimate(), resampling pairs within each round, or
    None with fewer than MIN_PAIRS pairs in a round. Seeded: the same pairs give the same
    interval, so a report can be rewritten."""
    if min(len(r) for r in rounds) < MIN_PAIRS:
        return None
    rng = random.Random(seed)
    est = sorted(estimate([rng.choices(r, k=len(r)) for r in rounds])
                 for _ in range(resamples))
    tail = (1 - level) / 2
    return est[int(tail * resamples)], est[int((1 - tail) * resamples) - 1]


def regression(a, b, round_pairs=None, **kw):
    """B against A in percent: {"pct", "lo", "hi", "pairs"}; lo and hi are None when there
    are too few pairs for an interval."""
    r = ratios(a, b)
    if not r:
        return {"pct": None, "lo": None, "hi": None, "pairs": 0}
    rounds = split(r, round_pairs)
    ci = estimate_ci(rounds, **kw)
    pct = lambda x: 100 * (x - 1)  # noqa: E731
    return {"pct": pct(estimate(rounds)), "lo": pct(ci[0]) if ci else None,
            "hi": pct(ci[1]) if ci else None, "pairs": len(r)}


def verdict(reg, goal_pct):
    """"met" when the whole interval is at or below goal_pct, "NOT met" when it is all
    above, else "not resolved": this many pairs on this machine cannot tell."""
    if reg is None or reg["pairs"] == 0:
        return "not measured"
    if reg["lo"] is None:
        return "not resolved"
    if reg["hi"] <= goal_pct:
        return "met"
    if reg["lo"] > goal_pct:
        return "NOT met"
    return "not resolved"


def ratio(reg):
    """regression() as the ratio B/A: (estimate, lo, hi, pairs); lo and hi None when
    there are too few pairs for an interval."""
    f = lambda x: None if x is None else 1 + x / 100  # noqa: E731
    return f(reg["pct"]), f(reg["lo"]), f(reg["hi"]), reg["pairs"]


def ratio_verdict(ri, bound, at_least=False):
    """A goal on ratio(): met when the whole interval is on the goal's side, NOT met when
    all of it is on the other, else not resolved (too few pairs, or the interval
    straddles the goal)."""
    if ri is None:
        return "not measured"
    _, lo, hi, _ = ri
    if lo is None:
        return "not resolved"
    if at_least:
        return "met" if lo >= bound else "**NOT met**" if hi < bound else "not resolved"
    return "met" if hi <= bound else "**NOT met**" if lo > bound else "not resolved"


def fmt_times(reg, speedup):
    """regression() as text: B/A ("1.05×") and its interval, or A/B (how many times
    less B takes) when speedup."""
    x, lo, hi, _ = ratio(reg)
    if speedup:
        x, lo, hi = 1 / x, (None if hi is None else 1 / hi), (None if lo is None else 1 / lo)
    return f"{x:.2f}×", "too few pairs" if lo is None else f"{lo:.2f}–{hi:.2f}×"


def fmt(reg):
    if reg is None or reg["pct"] is None:
        return "–"
    if reg["lo"] is None:
        return f"{reg['pct']:+.1f}% (too few pairs for an interval)"
    return f"{reg['pct']:+.1f}% [{reg['lo']:+.1f}, {reg['hi']:+.1f}]"


def main(paths):
    seen = 0
    for path in paths:
        with open(path, errors="replace") as f:
            for line in f:
                line = line.strip()
                if line.startswith("# bench "):
                    line = line[len("# bench "):]
                if not line.startswith("{"):
                    continue
                try:
                    r = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if r.get("case") != "regression" or "a" not in r:
                    continue
                seen += 1
                reg = regression(r["a"], r["b"], r.get("round_pairs"))
                shape = (f"{r['what']} ({r.get('backend')})" if "what" in r
                         else f"{r.get('pages')} pages")
                where = f"{r['vmas']} VMAs x " if "vmas" in r else ""
                print(f"{r.get('bench')}: {where}{shape}"
                      f"{' (A/A)' if r.get('aa') else ''}: {len(r['a'])} pairs, B/A "
                      f"{fmt(reg)}" + (f" ({LEVEL:.0%} interval)" if reg["lo"] is not None
                                       else ""))
    return 0 if seen else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
