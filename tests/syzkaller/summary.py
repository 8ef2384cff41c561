#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Summarise a syzkaller tier run (tests/syzkaller/run.sh): executions, corpus, crashes,
and the line coverage of the code the kernel queue adds or changes.

Writes the summary (markdown) to --out and prints the tier's RESULT lines.
Coverage comes from the manager's /cover?jsonl=1 (one record per instrumented PC, with
its source lines and how many corpus programs reach it): a line counts as instrumented
when a PC maps to it and as reached when such a PC has a hit. The queue's lines are those
its diff adds (git diff -U0 mmext-base..HEAD) in the kernel's C files and headers.
"""
import argparse
import collections
import csv
import glob
import json
import os
import re
import subprocess
import sys

# The files whose every line is the queue's, and the ones it changes in part.
NEW_FILES = ("mm/cow_pte.c", "mm/refpage.c")


def read_bench(path):
    """The last statistics object of a syz-manager -bench file (a stream of JSON)."""
    try:
        text = open(path).read()
    except OSError:
        return {}
    dec, pos, last = json.JSONDecoder(), 0, {}
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return last
        try:
            last, pos = dec.raw_decode(text, pos)
        except ValueError:
            return last


def queue_lines(ktree):
    """{file: set(line numbers)} the queue adds or changes, in its C files and headers."""
    out = subprocess.run(["git", "-C", ktree, "diff", "-U0", "mmext-base..HEAD", "--", "*.c", "*.h"],
                         check=True, capture_output=True, text=True).stdout
    lines, cur = collections.defaultdict(set), None
    for ln in out.splitlines():
        if ln.startswith("+++ "):
            cur = ln[6:] if ln.startswith("+++ b/") else None
            if cur and cur.startswith("tools/"):
                cur = None  # selftests run in userspace, not under KCOV
        elif ln.startswith("@@") and cur:
            m = re.match(r"@@ -\S+ \+(\d+)(?:,(\d+))? @@", ln)
            start, n = int(m.group(1)), int(m.group(2) or 1)
            lines[cur].update(range(start, start + n))
    return lines


def norm(path, ktree):
    """Kernel-relative path of a coverage record's file."""
    for prefix in (ktree.rstrip("/") + "/", "../../linux/"):
        if path.startswith(prefix):
            return path[len(prefix):]
    return path.lstrip("./")


def line_cover(jsonl, ktree, want):
    """{file: (instrumented lines, reached lines, {line: function})} for files in want."""
    inst = collections.defaultdict(set)
    hit = collections.defaultdict(set)
    func = collections.defaultdict(dict)
    with open(jsonl) as f:
        for rec in f:
            r = json.loads(rec)
            name = norm(r.get("file_path", ""), ktree)
            if name not in want:
                continue
            first, last = r.get("sl", 0), r.get("el", 0) or r.get("sl", 0)
            for line in range(first, max(first, last) + 1):
                inst[name].add(line)
                func[name][line] = r.get("func_name", "")
                if r.get("hit_count", 0):
                    hit[name].add(line)
    return {n: (inst[n], hit[n], func[n]) for n in want}


def ranges(nums):
    """'3-5, 9' for {3, 4, 5, 9}."""
    out, run = [], []
    for n in sorted(nums):
        if run and n == run[-1] + 1:
            run.append(n)
            continue
        if run:
            out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
        run = [n]
    if run:
        out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
    return ", ".join(out)


def crashes(work, known):
    """[(title, directory, reason it is known or None)] of the work directory's crashes."""
    rules = []
    if os.path.exists(known):
        for ln in open(known):
            ln = ln.rstrip("\n")
            if ln and not ln.startswith("#"):
                pat, _, why = ln.partition("\t")
                rules.append((re.compile(pat), why.strip()))
    out = []
    for d in sorted(glob.glob(os.path.join(work, "crashes", "*"))):
        try:
            title = open(os.path.join(d, "description")).readline().strip()
        except OSError:
            continue
        why = next((w for p, w in rules if p.search(title)), None)
        out.append((title, d, why))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--logs", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--ktree", required=True)
    ap.add_argument("--known", required=True)
    ap.add_argument("--runs", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    doc, results = [], []
    doc.append("# syzkaller tier summary\n")
    durations = {}
    if os.path.exists(os.path.join(a.logs, "durations")):
        for ln in open(os.path.join(a.logs, "durations")):
            r, s = ln.split()
            durations[r] = int(s)

    doc.append("| run | seconds | execs | execs/s | corpus | coverage (PCs) | VM crashes |")
    doc.append("|---|---|---|---|---|---|---|")
    for r in a.runs.split():
        b = read_bench(os.path.join(a.logs, r + ".bench"))
        secs = durations.get(r, 0)
        execs = b.get("exec total", 0)
        rate = f"{execs / secs:.2f}" if secs else "-"
        doc.append(f"| {r} | {secs} | {execs} | {rate} | {b.get('corpus', 0)} | "
                   f"{b.get('coverage', 0)} | {b.get('crashes', 0)} |")
        ok = execs > 0
        results.append(f"RESULT syzkaller-{r} {'pass 1 0 0' if ok else 'fail 0 1 0'}")
        if not ok:
            doc.append(f"\n{r}: the manager executed no program (see {r}.log)")

    hist = os.path.join(a.work, "history.tsv")
    if os.path.exists(hist):
        total = sum(int(ln.split("\t")[2]) for ln in open(hist) if ln.strip() and not ln.startswith("#"))
        doc.append(f"\nFuzzing time over every run with this work directory ({hist}): "
                   f"{total} s ({total / 3600:.1f} h).")

    doc.append("\n## Crashes\n")
    found = crashes(a.work, a.known)
    if not found:
        doc.append("None.")
    for title, d, why in found:
        slug = re.sub(r"[^A-Za-z0-9]+", "_", title).strip("_")[:60]
        if why:
            doc.append(f"- {title} ({d}): stock's, {why}")
            results.append(f"RESULT syzkaller-crash-{slug} skip 0 0 1")
        else:
            doc.append(f"- **{title}** ({d}): not triaged")
            results.append(f"RESULT syzkaller-crash-{slug} fail 0 1 0")

    doc.append("\n## Coverage of the queue's code\n")
    jsonl = os.path.join(a.logs, "cover.jsonl")
    if not os.path.exists(jsonl):
        doc.append("No coverage was fetched (cover.jsonl is missing).")
        results.append("RESULT syzkaller-coverage fail 0 1 0")
    else:
        ours = queue_lines(a.ktree)
        cov = line_cover(jsonl, a.ktree, set(ours))
        doc.append("Lines the queue adds or changes that KCOV instruments, and how many the "
                   "corpus reaches.\n")
        doc.append("| file | queue lines instrumented | reached | % |")
        doc.append("|---|---|---|---|")
        detail = []
        for name in sorted(ours, key=lambda n: (n not in NEW_FILES, n)):
            inst, hit, func = cov[name]
            mine = inst & ours[name]
            if not mine:
                continue
            got = hit & mine
            doc.append(f"| {name} | {len(mine)} | {len(got)} | {100 * len(got) / len(mine):.0f} |")
            missed = mine - got
            if missed and (name in NEW_FILES or name == "fs/proc/task_mmu.c"):
                by_func = collections.defaultdict(set)
                for line in missed:
                    by_func[func.get(line, "?")].add(line)
                detail.append(f"\n### Not reached in {name}\n")
                for fn in sorted(by_func, key=lambda f: min(by_func[f])):
                    detail.append(f"- {fn}: {ranges(by_func[fn])}")
        doc.extend(detail)
        for name in NEW_FILES:
            inst, hit, _ = cov[name]
            if inst:
                pct = 100 * len(hit & inst) / len(inst)
                results.append(f"# {name}: {len(hit & inst)}/{len(inst)} lines reached ({pct:.0f}%)")
    fc = os.path.join(a.logs, "filecover.csv")
    if os.path.exists(fc):
        doc.append("\n## syz-manager's file coverage\n")
        doc.append("| file | covered lines | total lines |")
        doc.append("|---|---|---|")
        for row in csv.DictReader(open(fc)):
            name = norm(row.get("Filename", ""), a.ktree)
            if name in NEW_FILES or name == "fs/proc/task_mmu.c":
                doc.append(f"| {name} | {row.get('CoveredLines')} | {row.get('TotalLines')} |")

    with open(a.out, "w") as f:
        f.write("\n".join(doc) + "\n")
    print("\n".join(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
