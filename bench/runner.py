# SPDX-License-Identifier: GPL-2.0
"""Run the benchmark suites on the host and in stock and patched 6.12 guests, then
write report.md, results.json and plots. Started by bench/run.sh."""

import argparse
import hashlib
import importlib
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("MMEXT_BUILD", os.path.join(ROOT, "build"))
TARGETS = ("host", "stock", "patched")
GUEST_BENCH = "/mmext/bench"    # build/guest/bench as the guest sees it

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pairstats  # noqa: E402
from suites import SUITES  # noqa: E402

T0 = time.monotonic()


def say(msg):
    el = int(time.monotonic() - T0)
    print(f">>> [{el // 60:2d}:{el % 60:02d}] {msg}", file=sys.stderr, flush=True)


def sh(*cmd, **kw):
    say("$ " + " ".join(cmd))
    subprocess.run(cmd, check=True, cwd=ROOT, **kw)


def out(*cmd):
    try:
        return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (subprocess.CalledProcessError, FileNotFoundError):
        return "unknown"


def fmt_secs(s):
    s = int(s)
    return f"{s // 60} min {s % 60:02d} s" if s >= 60 else f"{s} s"


class Parser:
    """Collects "# bench {json}" lines, tagged with where they ran and for which suite;
    when live, also the seconds each suite took (times, by suite key)."""

    def __init__(self, target, records, quiet=False, times=None):
        self.target, self.records, self.quiet = target, records, quiet
        self.suite = self.label = None
        self.times, self.t_start = times, None

    def _clock(self, suite):
        now = time.monotonic()
        if self.times is not None and self.suite and self.t_start is not None:
            self.times[self.suite] = self.times.get(self.suite, 0) + now - self.t_start
        self.t_start = now

    def line(self, line):
        if line == "@@end":
            self._clock(None)
            self.suite = None
            return
        if line.startswith("@@suite "):
            self._clock(line)
            _, self.suite, self.label = line.split(maxsplit=2)
            if not self.quiet:
                say(f"{self.target}: {self.suite}: {self.label}")
            return
        if line.startswith("# bench "):
            if self.quiet is None:
                return
            try:
                r = json.loads(line[len("# bench "):])
            except json.JSONDecodeError:
                say(f"{self.target}: unparsable result line: {line}")
                return
            r.update(target=self.target, suite=self.suite, label=self.label)
            self.records.append(r)
            return
        # Progress: the benchmarks' own status lines and summaries, not the tables.
        if self.quiet:
            return
        if line.startswith(("fork_named:", "# ")) or "unavailable" in line:
            print(f"    {self.target}: {line}", file=sys.stderr, flush=True)


def guest_script(suites, mode, target):
    lines = ["# SPDX-License-Identifier: GPL-2.0",
             "# Written by bench/runner.py for one guest boot.", f"cd {GUEST_BENCH}"]
    for s in suites:
        for label, argv in s.runs(mode, target):
            lines.append(f"echo @@suite {s.KEY} {shlex.quote(label)}")
            lines.append("./" + " ".join(shlex.quote(a) for a in argv) + " || true")
    lines.append("echo @@end")
    return "\n".join(lines) + "\n"


def run_host(suites, mode, records, times):
    p = Parser("host", records, times=times)
    for s in suites:
        for label, argv in s.runs(mode, "host"):
            p.line(f"@@suite {s.KEY} {label}")
            cmd = [os.path.join(BUILD, "bench", argv[0])] + argv[1:]
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    text=True)
            for line in proc.stdout:
                p.line(line.rstrip("\n"))
            if proc.wait():
                say(f"host: {argv[0]} exited {proc.returncode}")
    p.line("@@end")


def quick_suites(suites):
    """The suites a quick run takes when --only names none: those that fit its time
    (a suite with QUICK = False runs in quick mode only when --only names it)."""
    left = [s.KEY for s in suites if not getattr(s, "QUICK", True)]
    if left:
        say(f"quick mode leaves out {', '.join(left)} (too long; --only runs it)")
    return [s for s in suites if getattr(s, "QUICK", True)]


def boots(suites):
    """The guest boots a target's suites need, in order: the initramfs guest for most,
    the Debian root filesystem (scripts/vm.sh --rootfs) for suites with ROOTFS set.
    [(rootfs, suites)], empty groups left out."""
    out = []
    for rootfs in (False, True):
        group = [s for s in suites if bool(getattr(s, "ROOTFS", False)) == rootfs]
        if group:
            out.append((rootfs, group))
    return out


def run_guest(suites, mode, target, records, est, times, rootfs=False):
    name = f"{target}-rootfs" if rootfs else target
    path = os.path.join(BUILD, "guest", "bench", f"run-{name}.sh")
    with open(path, "w") as f:
        f.write(guest_script(suites, mode, target))
    mem = max((getattr(s, "guest_mem", lambda m: 3)(mode) for s in suites), default=3)
    logdir = os.path.join(BUILD, "logs", f"bench-{name}")
    # Generous: a shared 2-core machine can be several times slower than the estimate.
    timeout = int(est * 4 + 300)
    cmd = [os.path.join(ROOT, "scripts", "vm.sh")] + (["--rootfs"] if rootfs else []) + [
        "-k", target, "-t", str(timeout), "-m", f"{mem}G", "-l", logdir, "--", "bash",
        f"{GUEST_BENCH}/run-{name}.sh"]
    say(f"booting {target}{' on the Debian root' if rootfs else ''} ({mem} GiB, timeout "
        f"{timeout} s); console: {logdir}/console.log")
    # Live: progress only (quiet=None); the results come from output.log below.
    p = Parser(target, records, quiet=None, times=times)
    # The console (boot log, tables) goes to a file; only progress lines are shown.
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, errors="replace")
    for line in proc.stdout:
        line = line.rstrip("\r\n")
        if line.startswith((">>>", "error:")):
            print(f"    {line}", file=sys.stderr, flush=True)
        elif line.startswith("@@suite ") or line == "@@end":
            p.line(line)
        elif p.suite and not line.startswith("# bench "):
            p.line(line)
    rc = proc.wait()
    # The results come from output.log (the guest's second serial port), which the
    # console's interleaved kernel messages cannot garble.
    p = Parser(target, records, quiet=True)
    try:
        with open(os.path.join(logdir, "output.log"), errors="replace") as f:
            for line in f:
                p.line(line.rstrip("\n"))
    except FileNotFoundError:
        pass
    if rc:
        say(f"{target}: vm.sh exited {rc} (see {logdir}); keeping what was measured")
    return rc


# Seconds to pack the initramfs, boot a guest and shut it down under TCG with the benchmark
# kernels (measured 7-24 s, more when kernels were building beside it).
GUEST_BOOT = 15

# The quick mode's budget: the seconds of measuring its plan (every suite's estimate and
# the boots) may take; what a quick run takes: docs/results/run-times.md. A suite that
# cannot fit says QUICK = False and runs in quick mode only when --only names it.
QUICK_BUDGET = 7 * 60 + 10


def timed_runs(records, target, suite):
    """Results and timed runs (repetitions summed over results) of one suite on one target."""
    rs = [r for r in records if r.get("target") == target and r.get("suite") == suite
          and r.get("case") != "machine" and isinstance(r.get("runs"), int)]
    return len(rs), sum(r["runs"] for r in rs)


def run_summary(records, suite_seconds, suite_est):
    """Lines: per target and suite, the time taken against the estimate and the runs."""
    out = []
    for t, per in suite_seconds.items():
        for key, est in suite_est.get(t, {}).items():
            n, runs = timed_runs(records, t, key)
            took = per.get(key)
            out.append(f"{t}: {key}: {fmt_secs(took) if took is not None else 'not run'}"
                       f" (estimated {fmt_secs(est)}), {n} results of {runs} timed runs")
    return out


def sha256(path):
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return "unknown"


# Options that slow the kernel down; the test kernels carry some, and a reader of
# absolute numbers must know.
SLOW_OPTIONS = ("PROVE_LOCKING", "LOCKDEP", "DEBUG_VM", "KASAN", "DEBUG_LIST",
                "DEBUG_ATOMIC_SLEEP", "DEBUG_KMEMLEAK", "SLUB_DEBUG_ON", "DEBUG_PAGEALLOC")


def kernel_dir(v):
    """The build directory of kernel v (stock or patched) in the variant that BENCH and
    DEBUG select: scripts/lib.sh owns that map, so ask it (scripts/kernel.sh outdir).
    Empty when it cannot say (kernel.sh says why on stderr)."""
    try:
        return subprocess.run([os.path.join(ROOT, "scripts", "kernel.sh"), "outdir", v],
                              cwd=ROOT, stdout=subprocess.PIPE, text=True,
                              check=True).stdout.strip()
    except (subprocess.CalledProcessError, OSError):
        return ""


def shown(path):
    """path as the report shows it: relative to the repo when inside it."""
    rel = os.path.relpath(path, ROOT)
    return path if rel.startswith("..") else rel


def debug_options(path):
    try:
        with open(path) as f:
            on = {line.split("=")[0][7:] for line in f if line.endswith("=y\n")}
    except OSError:
        return []
    return [o for o in SLOW_OPTIONS if o in on]


def lib_sh(word):
    """WORD as scripts/lib.sh expands it for the base in MMEXT_BASE (lib.sh owns the map
    from a base to its folders): "unknown" when lib.sh fails."""
    return out("bash", "-c", '. "$1" && echo "' + word + '"', "lib.sh",
               os.path.join(ROOT, "scripts", "lib.sh"))


def kernel_tree():
    """The patched tree of the base the guests boot (MMEXT_BASE, which --base sets)."""
    d = lib_sh("$BASE_BUILD")
    return os.path.join(BUILD if d == "unknown" else d, "linux")


def queue_kernel_files():
    """Files the queue changes outside tools/ and Documentation/: with none, stock and
    patched run the same kernel code and their difference is the noise floor."""
    names = out("git", "-C", kernel_tree(), "diff", "--name-only",
                "mmext-base", "HEAD", "--", ".", ":!tools", ":!Documentation")
    return None if names == "unknown" else len(names.split())


def host_cpu():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def guest_vcpus(records):
    """The guests' vCPUs as the benchmarks counted them online (their "machine" records):
    scripts/vm.sh decides how many, and the runner leaves it to. "?" when no guest
    reported; several counts are joined."""
    n = sorted({r["cpus"] for r in records if r.get("target") in ("stock", "patched")
                and r.get("case") == "machine" and isinstance(r.get("cpus"), int)})
    return ", ".join(str(c) for c in n) or "?"


def metadata(mode, records):
    accel = os.environ.get("MMEXT_ACCEL") or out("cat", os.path.join(BUILD, "accel"))
    meta = {
        "mode": mode,
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "host": {"cpu": host_cpu(), "cpus": os.cpu_count(), "kernel": platform.release()},
        "accel": accel,
        "guest": {"vcpus": guest_vcpus(records)},
        "repo_commit": out("git", "rev-parse", "HEAD"),
        "repo_dirty": out("git", "status", "--porcelain", "--untracked-files=no") != "",
        "base": os.environ["MMEXT_BASE"],
        "queue_commit": out("git", "-C", kernel_tree(), "rev-parse", "HEAD"),
        "base_commit": out("git", "-C", kernel_tree(), "rev-parse",
                           "mmext-base"),
        "kernels": {},
        "queue_kernel_files": queue_kernel_files(),
    }
    for v in ("stock", "patched"):
        mach = [r for r in records if r["target"] == v and r.get("case") == "machine"]
        rel = {str(r.get("kernel")) for r in mach}
        cpu = {str(r.get("cpu")) for r in mach}
        kdir = kernel_dir(v)
        config = os.path.join(kdir, ".config") if kdir else None
        meta["kernels"][v] = {
            "release": ", ".join(sorted(rel)) or "not run",
            "guest_cpu": ", ".join(sorted(cpu)) or "unknown",
            "build": shown(kdir) if kdir else "unknown",
            "config_sha256": sha256(config) if config else "unknown",
            "debug_options": debug_options(config) if config else [],
        }
    return meta


class Context:
    """What a suite's report() gets: its records, the metadata and a plot helper."""

    def __init__(self, outdir, meta, records, suite):
        self.outdir, self.meta, self.mode = outdir, meta, meta["mode"]
        self.records = [r for r in records if r.get("suite") == suite]

    def find(self, **want):
        return [r for r in self.records if all(r.get(k) == v for k, v in want.items())]

    def one(self, **want):
        got = self.find(**want)
        return got[-1] if got else None

    def plot(self, fig, name, alt):
        fig.savefig(os.path.join(self.outdir, name), dpi=110, bbox_inches="tight")
        import matplotlib.pyplot as plt
        plt.close(fig)
        return f"![{alt}]({name})"


def write_report(outdir, meta, records, suites):
    import matplotlib
    matplotlib.use("Agg")
    m = meta
    md = [
        "<!-- SPDX-License-Identifier: GPL-2.0 -->",
        f"# mmext benchmark report ({m['mode']} mode)",
        "",
        f"Generated by `bench/run.sh{' --quick' if m['mode'] == 'quick' else ''}"
        f"{' --longer %g' % m['longer'] if m.get('longer', 1) != 1 else ''}` on "
        f"{m['date']}; raw results in `results.json` (compare two with "
        "`bench/run.sh --compare A.json B.json`).",
        "",
        "| | |",
        "|---|---|",
        f"| host CPU | {m['host']['cpu']} ({m['host']['cpus']} CPUs) |",
        f"| host kernel | {m['host']['kernel']} |",
        f"| guests | QEMU, {m['accel'].upper()}, {m['guest']['vcpus']} vCPUs, "
        f"{m['guest'].get('mem_gib', '?')} GiB |",
    ]
    for v, k in m["kernels"].items():
        dbg = ", ".join(k.get("debug_options", [])) or "none"
        md.append(f"| {v} kernel | {k['release']} ({k.get('build', v)}), config "
                  f"sha256 `{k['config_sha256'][:16]}…`"
                  f", guest CPU {k['guest_cpu']}; debug options: {dbg} |")
    md += [
        f"| queue commit (HEAD of the {m.get('base', 'default')} base's tree) | "
        f"`{m['queue_commit']}` (base `{m['base_commit'][:12]}`) |",
        f"| repo commit | `{m['repo_commit']}`{' + uncommitted changes' if m['repo_dirty'] else ''} |",
        f"| wall time | {fmt_secs(m.get('seconds', 0))} (estimated {fmt_secs(m.get('estimate', 0))}) |",
        "",
    ]
    if m.get("suite_seconds"):
        ts = list(m["suite_seconds"])
        md += ["Time per suite and target, measured (estimated), and the timed runs behind "
               "the results (repetitions summed over a suite's cases):", "",
               "| suite | " + " | ".join(ts) + " |", "|---|" + "---|" * len(ts)]
        for s in suites:
            cells = []
            for t in ts:
                took = m["suite_seconds"][t].get(s.KEY)
                est = m.get("suite_estimates", {}).get(t, {}).get(s.KEY)
                n, runs = timed_runs(records, t, s.KEY)
                cells.append("–" if took is None else
                             f"{fmt_secs(took)} ({fmt_secs(est or 0)}), {runs} runs")
            md.append(f"| {s.KEY} | " + " | ".join(cells) + " |")
        md.append("")
    if m["accel"] != "kvm":
        md += ["**The guests run under TCG** (QEMU's binary translator, no hardware "
               "virtualisation): every kernel entry, page fault and TLB flush is emulated, "
               "so absolute times are tens of times those of real hardware. Read the guest "
               "figures as ratios (named/unnamed, patched/stock, backend/backend), which "
               "TCG distorts far less; the host rows run at native speed.", ""]
    if any(k.get("debug_options") for k in m["kernels"].values()):
        md += ["The guest kernels were built with the debug options listed "
               "above (lockdep and `DEBUG_VM` checks run on every lock and VMA operation): "
               "one more reason to compare ratios, not absolute times.", ""]
    if m.get("queue_kernel_files") == 0:
        md += ["The queue changes no kernel code yet (only tools/ or Documentation/), so "
               "stock and patched run the same code: their ratios below are an A/A test and "
               "show this machine's noise floor, not an effect of the queue.", ""]
    for s in suites:
        ctx = Context(outdir, meta, records, s.KEY)
        md.append(f"## {s.TITLE}")
        md.append("")
        try:
            md.append(s.report(ctx))
        except Exception as e:  # one broken section must not cost the others
            md.append(f"(report section failed: {e!r})")
        md.append("")
    with open(os.path.join(outdir, "report.md"), "w") as f:
        f.write("\n".join(md))


class DocsError(Exception):
    """Why --write-docs writes no file."""


def doc_markers(key):
    return f"<!-- bench:{key} goals -->", f"<!-- end bench:{key} goals -->"


def docs_refusal(meta, records, suite):
    """Why these results may not stand in suite.DOC, or None: a doc states what a full run
    of a committed tree measured, on every target its table needs."""
    if meta.get("mode") != "full":
        return f"{meta.get('mode', 'unknown')} mode results (the docs take a full run)"
    if meta.get("repo_dirty") is not False:
        return "results from a tree with uncommitted changes (or no record of it)"
    if not all(c in "0123456789abcdef" for c in meta.get("repo_commit") or "x"):
        return "results with no repo commit"
    have = {r.get("target") for r in records if r.get("suite") == suite.KEY}
    missing = [t for t in suite.DOC_TARGETS if t not in have]
    if missing:
        return (f"no {suite.KEY} results on {', '.join(missing)} (its table needs "
                f"{', '.join(suite.DOC_TARGETS)})")
    return None


def provenance(meta, suite):
    """The lines under a docs block's marker: what run, tree, machine and kernels."""
    m = meta
    cmd = f"`{m['command']}`" if m.get("command") else "a full run (command not recorded)"
    where = [f"host {m['host']['cpu']} ({m['host']['cpus']} CPUs), Linux "
             f"{m['host']['kernel']}"]
    guests = [t for t in suite.DOC_TARGETS if t != "host"]
    if guests:
        where.append(f"guests QEMU {m['accel'].upper()}, {m['guest']['vcpus']} vCPUs, "
                     f"{m['guest'].get('mem_gib', '?')} GiB")
    for t in guests:
        k = m["kernels"][t]
        where.append(f"{t} kernel {k['release']} ({k.get('build', t)}, debug options: "
                     f"{', '.join(k.get('debug_options', [])) or 'none'})")
    line = (f"From {cmd} at repo {m['repo_commit'][:12]}, no uncommitted changes, on "
            f"{m['date']}: {'; '.join(where)}. Written by `bench/run.sh --write-docs`.")
    # Wrapped as the docs are; a code span may span lines.
    return textwrap.wrap(line, 88, break_long_words=False, break_on_hyphens=False)


def replace_block(text, key, lines, path):
    """text with the lines between key's markers replaced by lines."""
    start, end = doc_markers(key)
    doc = text.split("\n")
    i = [n for n, line in enumerate(doc) if line.strip() == start]
    j = [n for n, line in enumerate(doc) if line.strip() == end]
    if len(i) != 1 or len(j) != 1 or j[0] < i[0]:
        raise DocsError(f"{path}: wants one line '{start}' and, after it, one line "
                        f"'{end}'")
    return "\n".join(doc[:i[0] + 1] + [""] + lines + [""] + doc[j[0]:])


def write_docs(meta, records, suites, want, outdir, root=None):
    """Rewrite the goals block of each suite's DOC from the results: the suites keyed in
    want, or (want None) those with results. Checks every file before writing one, and
    replaces each whole (a reader or a crash never sees half a file). Raises DocsError;
    returns the files written."""
    root = root or ROOT
    have = {r.get("suite") for r in records}
    if want is None:
        chosen = [s for s in suites if getattr(s, "DOC", None) and s.KEY in have]
        if not chosen:
            raise DocsError("no suite of these results has a docs block (suites with one: "
                            + ", ".join(s.KEY for s in suites if getattr(s, "DOC", None))
                            + ")")
    else:
        chosen = [s for s in suites if s.KEY in want]
        bad = sorted(set(want) - {s.KEY for s in chosen if getattr(s, "DOC", None)})
        if bad:
            raise DocsError(f"no docs block for {', '.join(bad)}")
    errors, new = [], {}
    for s in chosen:
        why = docs_refusal(meta, records, s)
        if why:
            errors.append(f"{s.KEY}: {why}")
            continue
        path = os.path.join(root, s.DOC)
        try:
            if path not in new:
                with open(path) as f:
                    new[path] = f.read()
            table = s.goals_table(Context(outdir, meta, records, s.KEY))
            if not table:
                raise DocsError("these results give no goals table")
            new[path] = replace_block(new[path], s.KEY, [*provenance(meta, s), "", *table],
                                      s.DOC)
        except (OSError, DocsError) as e:
            errors.append(f"{s.KEY}: {e}")
    if errors:
        raise DocsError("; ".join(errors))
    for path, text in new.items():
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".write-docs-")
        try:
            with os.fdopen(fd, "w") as f:
                f.write(text)
            shutil.copymode(path, tmp)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    return list(new)


def key(r):
    return tuple(str(r.get(k, "")) for k in
                 ("target", "bench", "group", "case", "backend", "vmas", "pages", "dirty_pct"))


def compare(a_path, b_path):
    a, b = (json.load(open(p)) for p in (a_path, b_path))
    am = {key(r): r for r in a["records"] if "median" in r}
    print(f"# A: {a_path} ({a['meta']['date']}, {a['meta']['mode']}, repo "
          f"{a['meta']['repo_commit'][:12]}, base {a['meta'].get('base', 'not recorded')})")
    print(f"# B: {b_path} ({b['meta']['date']}, {b['meta']['mode']}, repo "
          f"{b['meta']['repo_commit'][:12]}, base {b['meta'].get('base', 'not recorded')})")
    print(f"{'TARGET':8} {'BENCH':11} {'CASE':40} {'A median':>12} {'B median':>12} "
          f"{'B/A':>7}")
    n = 0
    for r in b["records"]:
        o = am.get(key(r))
        if "median" not in r or not o or not o["median"]:
            continue
        what = " ".join(str(r.get(k)) for k in ("case", "backend") if r.get(k))
        for k in ("vmas", "pages"):
            if k in r:
                what += f" {k}={r[k]}"
        print(f"{r['target']:8} {r['bench']:11} {what:40} {o['median']:12.4g} "
              f"{r['median']:12.4g} {r['median'] / o['median']:7.3f}")
        n += 1
    print(f"# {n} results in both; B/A > 1: B slower")
    # Paired regressions (fork_named's pairs): each run's own figure and interval.
    ar = {key(r): r for r in a["records"] if r.get("case") == "regression" and r.get("a")}
    for r in b["records"]:
        o = ar.get(key(r))
        if r.get("case") != "regression" or not r.get("a") or not o:
            continue
        ra, rb = (pairstats.regression(x["a"], x["b"], x.get("round_pairs")) for x in (o, r))
        print(f"{r['target']:8} {r['bench']:11} paired vmas={r.get('vmas')} "
              f"pages={r.get('pages')}: A {pairstats.fmt(ra)}, B {pairstats.fmt(rb)}")
    return 0 if n else 1


def docs(meta, records, suites, want, outdir):
    """--write-docs: 0 when written, else 2 with the reason and no file changed."""
    try:
        for path in write_docs(meta, records, suites, want, outdir):
            say(f"docs: {shown(path)}")
    except DocsError as e:
        print(f"bench/run.sh: --write-docs: nothing written: {e}", file=sys.stderr)
        return 2
    return 0


def main():
    ap = argparse.ArgumentParser(prog="bench/run.sh", description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer runs, for a short run "
                    "(its time: docs/results/run-times.md)")
    ap.add_argument("--only", metavar="SUITE,...",
                    help="comma-separated suites by feature: " + ",".join(SUITES))
    ap.add_argument("--targets", default=",".join(TARGETS), help="host,stock,patched")
    ap.add_argument("--base", metavar="BASE",
                    help="the kernel base of the stock and patched guests, a directory of "
                         "kernel/ (default: the default base, 6.12)")
    ap.add_argument("--out", default=None,
                    help="the report's directory (default: build/report, for another "
                         "base than the default build/report-BASE)")
    ap.add_argument("--no-build", action="store_true", help="use what is built")
    ap.add_argument("--test-kernels", action="store_true",
                    help="measure the test kernels (lockdep, DEBUG_VM) instead of the "
                         "benchmark builds (kernel/config/bench.config)")
    ap.add_argument("--longer", type=float, default=1.0, metavar="N",
                    help="measure time-bounded cases N times longer (anon_names' pairs), "
                         "for narrower intervals")
    ap.add_argument("--compare", nargs=2, metavar=("A.json", "B.json"),
                    help="compare two runs' results.json, B against A, and exit")
    ap.add_argument("--report-only", action="store_true",
                    help="rewrite report.md and plots from OUT/results.json")
    ap.add_argument("--write-docs", nargs="?", const="", metavar="SUITE,...",
                    help="also rewrite the goals block of each suite's docs/results file "
                         "(default: every suite with results) from these results; refuses "
                         "quick runs, a tree with uncommitted changes and missing targets")
    args = ap.parse_args()
    default_base = lib_sh("$(default_base)")
    if args.base and not os.path.isfile(os.path.join(ROOT, "kernel", args.base, "base.conf")):
        ap.error(f"--base: no kernel/{args.base}/base.conf")
    base = args.base or os.environ.get("MMEXT_BASE") or default_base
    if args.write_docs is not None and base != default_base:
        ap.error("--write-docs: docs/results' goals blocks hold the default base's figures")
    os.environ["MMEXT_BASE"] = base
    if args.out is None:
        args.out = os.path.join(BUILD, "report" if os.environ["MMEXT_BASE"] == default_base
                                else "report-" + os.environ["MMEXT_BASE"])
    doc_suites = args.write_docs.split(",") if args.write_docs else None
    if args.compare:
        return compare(*args.compare)
    if args.report_only:
        with open(os.path.join(args.out, "results.json")) as f:
            res = json.load(f)
        suites = [importlib.import_module("suites." + n) for n in SUITES]
        for v, k in res["meta"].get("kernels", {}).items():
            # Older results lack it; the build tree's config is the best guess.
            if "debug_options" not in k and kernel_dir(v):
                k["debug_options"] = debug_options(os.path.join(kernel_dir(v), ".config"))
        res["meta"].setdefault("queue_kernel_files", queue_kernel_files())
        write_report(args.out, res["meta"], res["records"], suites)
        say(f"report: {args.out}/report.md")
        if args.write_docs is not None:
            return docs(res["meta"], res["records"], suites, doc_suites, args.out)
        return 0

    mode = "quick" if args.quick else "full"
    # kernel.sh and vm.sh (and kernel_dir) pick the benchmark builds with BENCH=1.
    os.environ.pop("DEBUG", None)
    os.environ["BENCH"] = "0" if args.test_kernels else "1"
    suites = [importlib.import_module("suites." + n) for n in SUITES]
    if args.longer < 1:
        ap.error("--longer: N must be at least 1")
    for s in suites:
        s.LONGER = args.longer
    if args.only:
        want = set(args.only.split(","))
        suites = [s for s in suites if s.KEY in want]
    elif mode == "quick":
        suites = quick_suites(suites)
    targets = [t for t in TARGETS if t in args.targets.split(",")]
    bad = set(args.targets.split(",")) - set(TARGETS) - {""}
    if bad or not targets:
        ap.error(f"--targets: {'unknown ' + ', '.join(sorted(bad)) if bad else 'none given'}"
                 f" (choose from {','.join(TARGETS)})")
    if args.only and want - {s.KEY for s in suites}:
        ap.error(f"--only: no suite {', '.join(sorted(want - {s.KEY for s in suites}))} "
                 f"(have {','.join(SUITES)})")
    suite_est = {t: {s.KEY: s.estimate(mode, t) for s in suites if t in s.TARGETS}
                for t in targets}
    est = {t: sum(suite_est[t].values()) for t in targets}
    nboots = {t: len(boots([s for s in suites if t in s.TARGETS])) for t in targets}
    total = sum(est.values()) + GUEST_BOOT * sum(nboots[t] for t in targets if t != "host")
    say(f"{mode} mode, suites {', '.join(s.KEY for s in suites)} on {', '.join(targets)}: "
        f"estimated {fmt_secs(total)} of measuring, plus any building")

    if not args.no_build:
        sh("scripts/deps.sh")
        sh("scripts/kernel.sh", "prepare")
        for v in ("stock", "patched"):
            if v in targets:
                sh("scripts/kernel.sh", "build", v)
        # The guest payload's tests and tools too: the initramfs packs build/guest whole.
        sh("make", "-s", "-C", "bench", f"BUILD={BUILD}", "guest")
        # The Debian root filesystem (cached; built when its package list changed).
        if any(getattr(s, "ROOTFS", False) for s in suites
               if any(t in s.TARGETS for t in targets if t != "host")):
            sh("scripts/mkrootfs.sh", stdout=subprocess.DEVNULL)
    elif any(t != "host" for t in targets) and not os.path.isdir(
            os.path.join(BUILD, "guest", "bench")):
        sys.exit("bench/run.sh: --no-build, but the guest payload is not built "
                 "(build/guest/bench): run once without --no-build")

    os.makedirs(args.out, exist_ok=True)
    records, seconds, suite_seconds, status = [], {}, {}, 0
    t_meas = time.monotonic()
    for t in targets:
        ts = [s for s in suites if t in s.TARGETS]
        if not ts:
            continue
        t1 = time.monotonic()
        suite_seconds[t] = {}
        if t == "host":
            run_host(ts, mode, records, suite_seconds[t])
        else:
            for rootfs, group in boots(ts):
                status |= run_guest(group, mode, t, records,
                                    sum(suite_est[t][s.KEY] for s in group),
                                    suite_seconds[t], rootfs)
        seconds[t] = time.monotonic() - t1
        boot = GUEST_BOOT * nboots[t] if t != "host" else 0
        say(f"{t} done in {fmt_secs(seconds[t])} (estimated {fmt_secs(est[t] + boot)})")
    for line in run_summary(records, suite_seconds, suite_est):
        say(line)

    # Raw results first: a failure below must not lose an hour of measuring.
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"meta": {"mode": mode}, "records": records}, f, indent=1)
    meta = metadata(mode, records)
    meta["command"] = shlex.join(["bench/run.sh"] + sys.argv[1:])
    meta["guest"]["mem_gib"] = max((getattr(s, "guest_mem", lambda m: 3)(mode)
                                    for s in suites), default=3)
    meta["longer"] = args.longer
    meta["seconds"] = time.monotonic() - T0
    meta["measure_seconds"] = time.monotonic() - t_meas
    meta["estimate"] = total
    meta["target_seconds"] = seconds
    meta["suite_seconds"] = suite_seconds
    meta["suite_estimates"] = suite_est
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"meta": meta, "records": records}, f, indent=1)
    write_report(args.out, meta, records, suites)
    say(f"report: {args.out}/report.md ({len(records)} results); took "
        f"{fmt_secs(meta['seconds'])}, estimated {fmt_secs(total)} of measuring")
    if args.write_docs is not None:
        status |= docs(meta, records, suites, doc_suites, args.out)
    return 1 if status else 0


if __name__ == "__main__":
    sys.exit(main())
