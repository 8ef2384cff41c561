# SPDX-License-Identifier: GPL-2.0
"""The test command's orchestrator, started by tests/run.sh (whose header is the usage):
which tiers run, the kernel each guest tier boots, the baseline comparison and the totals.
The kernel builds and the guests stay in shell (scripts/kernel.sh, scripts/vm.sh); the
retries of a failing selftest happen in the guest (tests/run-suite.sh -R), and this file
says which ones get none (-x)."""

import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN_SH = os.path.join(ROOT, "tests", "run.sh")
DEFAULT_TIERS = "lint host host-asan fuzz stock patched"
HOST_TIERS = ("lint", "host", "host-asan", "fuzz")
OTHER_TIERS = ("kcsan", "syzkaller", "mainline", "installed")
DISTRO_PARTS = "proc vmtests stress fuzz trinity"
# The guest script's variables that reach a distro guest.
DISTRO_GUEST_VARS = ("VMTESTS_CATEGORIES", "VMTESTS_TIMEOUT", "STRESS_SECONDS",
                     "TRINITY_SECONDS", "UAPI_FUZZ_SECONDS")


class Target:
    """What a guest tier boots and how, as one name:
    [BASE/]stock|patched[-distro][-cow-all][-debug]. BASE is a directory of kernel/
    (none: the run's base), -distro the kernel from Debian's configuration, -cow-all the
    guest with every fork sharing page tables, -debug the KASAN/kmemleak build. The tier is
    the name without BASE and -debug (stock, patched-distro-cow-all, ...). The scripts that
    build and boot kernels still take these as MMEXT_BASE, DISTRO and DEBUG (env())."""

    PATTERN = re.compile(r"(?:(?P<base>[^/\s]+)/)?(?P<kernel>stock|patched)"
                         r"(?P<distro>-distro)?(?P<cow_all>-cow-all)?(?P<debug>-debug)?")

    def __init__(self, kernel, base=None, distro=False, cow_all=False, debug=False):
        self.kernel, self.base = kernel, base
        self.distro, self.cow_all, self.debug = distro, cow_all, debug

    @classmethod
    def parse(cls, name, base=None, debug=False):
        """The target NAME names, or None; BASE and DEBUG fill what NAME leaves out."""
        m = cls.PATTERN.fullmatch(name)
        if not m or (m["kernel"] == "stock" and m["cow_all"]):
            return None
        return cls(m["kernel"], m["base"] or base, bool(m["distro"]), bool(m["cow_all"]),
                   bool(m["debug"]) or debug)

    @property
    def tier(self):
        return self.kernel + ("-distro" if self.distro else "") + \
            ("-cow-all" if self.cow_all else "")

    def __str__(self):
        return (f"{self.base}/" if self.base else "") + self.tier + \
            ("-debug" if self.debug else "")

    def env(self, environ=None):
        """The environment scripts/kernel.sh and scripts/vm.sh read this target from."""
        env = dict(os.environ if environ is None else environ)
        if self.base:
            env["MMEXT_BASE"] = self.base
        env["DISTRO"] = "1" if self.distro else "0"
        env["DEBUG"] = "1" if self.debug else "0"
        return env


def expand_tiers(names):
    """The tier list with "distro" standing for its three tiers."""
    out = []
    for t in names.split():
        out += ["stock-distro", "patched-distro", "patched-distro-cow-all"] \
            if t == "distro" else [t]
    return out


def is_tier(name):
    return name in HOST_TIERS or name in OTHER_TIERS or Target.parse(name) is not None


def read_baseline(path):
    """NAME -> the RESULT column of a baseline file, all of them on one line each when a
    name has several lines; {} when there is no file."""
    res = {}
    try:
        with open(path) as f:
            for line in f:
                w = line.split()
                if len(w) >= 2:
                    res.setdefault(w[0], []).append(w[1])
    except FileNotFoundError:
        pass
    return {k: "\n".join(v) for k, v in res.items()}


def read_fixed(path):
    """The lines of selftests-fixed.txt, comments included, as its readers match them."""
    try:
        with open(path) as f:
            return [line.rstrip("\n") for line in f]
    except FileNotFoundError:
        return []


def names_fixed(name, fixed_lines):
    """Whether a line of selftests-fixed.txt names NAME (a distro result's mm/ or proc/
    prefix left out); the name is a basic regular expression matched against whole lines,
    of which names use only '.' and '*'."""
    short = name.split("/", 1)[1] if "/" in name else name
    pat = re.compile(re.escape(short).replace(r"\.", ".").replace(r"\*", "*"))
    return any(pat.fullmatch(line) for line in fixed_lines)


def num(s):
    """A count of a RESULT line; a missing one is 0."""
    return int(s) if s.isdigit() else 0


def result_lines(text, word):
    """The fields after WORD of each line that starts with "WORD "."""
    return [line[len(word) + 1:] for line in text.splitlines() if line.startswith(word + " ")]


class Totals:
    def __init__(self):
        self.passed = self.failed = self.skipped = 0
        self.failures, self.flaky = [], []

    def ok(self):
        return self.failed == 0 and not self.failures

    def fail(self, why):
        self.failures.append(why)
        self.failed += 1

    def tally(self, tier, text, baseline, fixed_lines, base_name, stock=False, say=print):
        """Add up a tier's RESULT lines against the baseline (stock's results, for the
        distro tiers stock-distro's) and the stock bugs the queue fixes (fixed_lines).
        A selftest that passes on stock must pass; one that fails there too is a known
        failure counted as skipped, unless it is a fixed bug: then only stock's failures
        are known (STOCK: the tier boots stock)."""
        for rest in result_lines(text, "RESULT"):
            w = rest.split(None, 4)
            w += [""] * (5 - len(w))
            name, res, cp, cf, cs = w
            base = baseline.get(name, "")
            known = ""
            if res == "fail":
                if names_fixed(name, fixed_lines):
                    if stock:
                        known = f"on stock {base_name} (a bug the queue fixes)"
                elif base == "fail":
                    known = f"on stock {base_name} too (baseline)"
            if known:
                say(f"# {tier}: {name} fails {known}: counted as skipped")
                self.skipped += num(cp) + num(cf) + num(cs)
                continue
            if base == "pass" and res != "pass":
                self.failures.append(f"{tier}: {name} passes on stock (baseline) but is {res} here")
                if cf == "0":
                    cf = "1"
            if res == "fail":
                self.failures.append(f"{tier}: {name} failed")
            self.passed += num(cp)
            self.failed += num(cf)
            self.skipped += num(cs)
        for name in result_lines(text, "FLAKY"):
            self.flaky.append(f"{tier}: {name.strip()} failed and passed on a retry")

    def summary(self, tiers, seconds):
        lines = [""]
        if self.flaky:
            lines += ["Flaky (counted as passed, look at them):"] + [f"  {x}" for x in self.flaky]
        if self.failures:
            lines += ["Failures:"] + [f"  {x}" for x in self.failures]
        lines.append(f"# tiers {tiers} took {seconds}s")
        lines.append(f"{self.passed} passed, {self.failed} failed, {self.skipped} skipped")
        return lines

    def to_json(self):
        return {"passed": self.passed, "failed": self.failed, "skipped": self.skipped,
                "failures": self.failures}


def guest_verdict(rc, output, logdir):
    """Why a guest run is not the tier's whole result (vm.sh's status RC, its OUTPUT),
    or None."""
    splats = os.path.join(logdir, "splats.log")
    if rc == 1 and os.path.exists(splats) and os.path.getsize(splats) > 0:
        return f"kernel splat in dmesg ({splats})"
    if rc == 124:
        return f"guest timed out ({logdir}/console.log)"
    if rc == 125:
        return ("guest ended without reporting a status: killed, hung or crashed "
                f"({logdir}/console.log)")
    if not result_lines(output, "RESULT"):
        return f"guest run produced no results (exit {rc}; {logdir}/console.log)"
    return None


def selftests_baseline(out_text, selftests_list, base, version):
    """selftests-baseline.txt from a stock tier's output: its RESULT lines for the
    selftests of SELFTESTS_LIST's text."""
    want = {line.split()[0] for line in selftests_list.splitlines()
            if not line.startswith("#") and line.split()}
    lines = [f"# Stock {base} ({version}) results of tests/selftests.list in our guest,",
             f"# written by 'tests/run.sh --base {base} --tiers stock --update-baseline'."
             " NAME RESULT PASS FAIL SKIP"]
    for rest in result_lines(out_text, "RESULT"):
        w = ("RESULT " + rest).split()
        if len(w) > 1 and w[1] in want:
            lines.append(" ".join((w + [""] * 6)[1:6]))
    return "\n".join(lines) + "\n"


def distro_baseline(out_text, old_text, base, version):
    """distro-baseline.txt from a stock-distro tier's output: its results replace the
    old file's lines for the same names and keep the others (a partial run)."""
    lines = [rest for rest in result_lines(out_text, "RESULT")]
    lines += [line for line in old_text.splitlines() if not line.startswith("#")]
    seen, kept = set(), []
    for line in lines:
        w = line.split()
        k = w[0] if w else ""
        if k not in seen:
            seen.add(k)
            kept.append(line)
    head = [f"# stock-distro {base} ({version}, Debian's configuration) results of the",
            "# distro tier, written by 'tests/run.sh --tiers stock-distro --update-baseline'.",
            "# NAME RESULT PASS FAIL SKIP"]
    return "\n".join(head + sorted(kept)) + "\n"


def skip_filtered(selftests_list, skip_text):
    """tests/selftests.list without the selftests a base's selftests-skip.txt names."""
    skip = {w[0] for w in (line.split() for line in skip_text.splitlines())
            if w and not w[0].startswith("#")}
    return "".join(line for line in selftests_list.splitlines(keepends=True)
                   if not line.split() or line.split()[0] not in skip)


def base_info(base):
    """What scripts/lib.sh makes of a base (empty: the default one), the only map from a
    base to its folders: a dict, or the exit status lib.sh died with."""
    keys = ("MMEXT_BASE", "BASE_QUEUE", "BASE_BUILD", "MMEXT_BASE_DEFAULT",
            "MMEXT_BASE_MAINLINE", "MMEXT_BASE_VERSION", "KOUT", "MMEXT_BUILD")
    script = ". \"$1\" && printf '%s\\n' " + " ".join(f'"${k}"' for k in keys) + \
        " && echo \"$(all_bases | xargs)\" && for b in $(all_bases); do" \
        " [ \"$(base_conf \"$b\" MMEXT_BASE_MAINLINE)\" = 1 ] && echo \"$b\"; done | xargs"
    env = dict(os.environ, MMEXT_BASE=base or "")
    p = subprocess.run(["bash", "-c", script, "base_info",
                        os.path.join(ROOT, "scripts", "lib.sh")],
                       env=env, stdout=subprocess.PIPE, text=True)
    if p.returncode:
        return p.returncode
    vals = p.stdout.split("\n")
    info = dict(zip(keys, vals))
    info["all_bases"] = vals[len(keys)].split()
    info["mainline_bases"] = vals[len(keys) + 1].split()
    return info


def usage(status=2):
    """run.sh's header, the one copy of the usage, as scripts/lib.sh's usage prints it."""
    with open(RUN_SH) as f:
        lines = f.read().splitlines()
    text = []
    for line in lines[1:]:
        if not line.startswith("#"):
            break
        if "SPDX-License-Identifier" not in line:
            text.append(re.sub(r"^# ?", "", line))
    print("\n".join(text), file=sys.stdout if status == 0 else sys.stderr)
    sys.exit(status)


def parse_args(argv):
    """{base, tiers (None: the default), update_baseline, list, summary_json}."""
    o = {"base": os.environ.get("MMEXT_BASE", ""), "tiers": None, "update_baseline": False,
         "list": False, "summary_json": None}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--base", "--tiers", "--summary-json"):
            if i + 1 >= len(argv):
                usage()
            o[a[2:].replace("-", "_")] = argv[i + 1]
            i += 1
        elif a == "--update-baseline":
            o["update_baseline"] = True
        elif a == "--list":
            o["list"] = True
        elif a in ("-h", "--help"):
            usage(0)
        else:
            usage()
        i += 1
    return o


class Run:
    def __init__(self, opts, info):
        self.o, self.info = opts, info
        self.base = info["MMEXT_BASE"]
        self.default_base = info["MMEXT_BASE_DEFAULT"] == "1"
        self.debug = os.environ.get("DEBUG", "0") == "1"
        q = info["BASE_QUEUE"]
        self.baseline_path = os.path.join(q, "selftests-baseline.txt")
        self.fixed_path = os.path.join(q, "selftests-fixed.txt")
        self.distro_baseline_path = os.path.join(q, "distro-baseline.txt")
        self.logs = os.path.join(info["BASE_BUILD"], "logs", "tests")
        self.totals = Totals()
        names = opts["tiers"]
        if names is None:
            # The host tiers do not depend on the base: another base runs only its guests.
            names = DEFAULT_TIERS if self.default_base else "stock patched"
        self.tiers = expand_tiers(names)
        # Every script, setup's prepare and selftests too, works on this run's base:
        # lib.sh's default when none is named.
        self.env = dict(os.environ, BUILD=info["MMEXT_BUILD"])
        self.env.pop("MMEXT_BASE", None)
        if not self.default_base:
            self.env["MMEXT_BASE"] = self.base

    def target(self, tier):
        return Target.parse(tier, self.base, self.debug)

    def guest_targets(self):
        return [t for t in map(self.target, self.tiers) if t]

    def want(self, tier):
        return tier in self.tiers

    def check(self):
        for t in self.tiers:
            if not is_tier(t):
                print(f"unknown tier {t}", file=sys.stderr)
                sys.exit(2)
        if not self.default_base and any(t in ("mainline",) + HOST_TIERS for t in self.tiers):
            print(f"error: --base {self.base} runs guest tiers only, not mainline or the "
                  "host tiers", file=sys.stderr)
            sys.exit(1)

    def sh(self, *cmd, env=None):
        """Run a setup step; the run ends with its status if it fails."""
        rc = subprocess.run(cmd, env=env or self.env).returncode
        if rc:
            sys.exit(rc)

    def script(self, *path):
        return os.path.join(ROOT, *path)

    def tinyconfig_guests(self):
        return [t for t in self.guest_targets() if not t.distro]

    def setup(self):
        """Build what the tiers need: the tests and the guest payload (the same whichever
        base boots them); for lint and the guests the base's tree, for the guests its
        kernels and selftests, built with patched's uapi headers."""
        os.makedirs(self.logs, exist_ok=True)
        self.sh(self.script("scripts", "deps.sh"))
        guests = bool(self.guest_targets())
        kernel_sh = self.script("scripts", "kernel.sh")
        if self.want("lint") or guests:
            self.sh(kernel_sh, "prepare")
        self.guest_list = "/mmext/tests/selftests.list"
        if guests:
            # patched always: the selftests are built with its uapi headers. The distro
            # tiers build their own kernels.
            builds = [Target("patched", self.base, debug=self.debug)]
            for t in self.tinyconfig_guests():
                t = Target(t.kernel, t.base, debug=t.debug)
                if str(t) not in map(str, builds):
                    builds.append(t)
            for t in builds:
                self.sh(kernel_sh, "build", t.kernel, env=t.env(self.env))
            self.sh(kernel_sh, "selftests")
            # A base without some of the queue's selftests names them in its
            # selftests-skip.txt; the filtered list sits next to the base's selftests
            # (/mmext/kselftest in the guest), where its relative paths still hold.
            skip = os.path.join(self.info["BASE_QUEUE"], "selftests-skip.txt")
            if os.path.isfile(skip):
                with open(self.script("tests", "selftests.list")) as f, open(skip) as s:
                    text = skip_filtered(f.read(), s.read())
                with open(os.path.join(self.info["KOUT"], "kselftest", "selftests.list"),
                          "w") as f:
                    f.write(text)
                self.guest_list = "/mmext/kselftest/selftests.list"
        self.sh("make", "-s", "-C", self.script("tests"))
        if self.want("host-asan"):
            self.sh("make", "-s", "-C", self.script("tests"), "SANITIZE=1",
                    "OUT=" + os.path.join(self.info["MMEXT_BUILD"], "guest-asan"))
        self.sh("make", "-s", "-C", self.script("examples"))

    def tee(self, cmd, out, stderr=None, env=None):
        """Run CMD with its output on ours and in OUT; its exit status."""
        with open(out, "wb") as f:
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=stderr,
                                 env=env or self.env)
            for line in p.stdout:
                sys.stdout.buffer.write(line)
                sys.stdout.buffer.flush()
                f.write(line)
            return p.wait()

    def guest(self, tier, target, cmd, out, vm_args=()):
        """Boot TARGET running CMD; its output becomes OUT, the tier's results."""
        logdir = os.path.join(self.info["BASE_BUILD"], "logs", f"vm-{tier}")
        rc = subprocess.run([self.script("scripts", "vm.sh"), "-k", target.kernel,
                             *vm_args, "-l", logdir, "--", *cmd],
                            env=target.env(self.env)).returncode
        try:
            with open(os.path.join(logdir, "output.log"), "rb") as f:
                data = f.read()
        except OSError:
            data = b""
        with open(out, "wb") as f:
            f.write(data)
        why = guest_verdict(rc, data.decode(errors="replace"), logdir)
        if why:
            self.totals.fail(f"{tier}: {why}")

    def vm_cmd(self, target):
        """vm.sh's options and the guest command of a tinyconfig guest tier."""
        # KASAN and kmemleak make the large-VMA tests several times slower under TCG.
        suite_t, vm_t = (1800, 7200) if target.debug else (1200, 3600)
        if target.cow_all:
            # Test switch: every fork shares PTE tables; the selftest subset must not notice.
            cmd = ["sh", "-c", "echo 1 > /sys/kernel/mm/cow_pte/force_all && "
                   f"exec /mmext/tests/run-suite.sh -t {suite_t} -R {self.guest_list}"]
        else:
            # On stock, the bugs the queue fixes fail every try: no retries for them.
            no_retry = []
            if target.kernel == "stock":
                for line in read_fixed(self.fixed_path):
                    if not line.startswith("#"):
                        for n in line.split():
                            no_retry += ["-x", n]
            cmd = ["/mmext/tests/run-suite.sh", "-t", str(suite_t), *no_retry,
                   "/mmext/bin/tests.list", "-R", self.guest_list]
        return ["-t", str(vm_t)], cmd

    def distro_cmd(self, target):
        parts = os.environ.get("DISTRO_PARTS") or DISTRO_PARTS
        cmd = ""
        for v in DISTRO_GUEST_VARS:
            if os.environ.get(v):
                cmd += f"export {v}='{os.environ[v]}'; "
        cmd += f"exec /mmext/tests/distro-guest.sh {parts}"
        # Debian's kernel has no CONFIG_DEBUG_VM, so no force_all switch: every process of
        # the tier opts in as a user would, by a setting kept across fork() and execve()
        # (enabled=2 lets trinity's and uapi_fuzz's unprivileged processes keep it).
        if target.cow_all:
            cmd = "echo 2 > /sys/kernel/mm/cow_pte/enabled || exit 1; " + \
                cmd.replace("exec ", "exec mmext run --cow-pte -- ", 1)
        vm_t = int(os.environ.get("DISTRO_VM_TIMEOUT") or 21600) * (2 if target.debug else 1)
        return ["-m", "4G", "-c", os.environ.get("DISTRO_VM_CPUS") or "4", "-t", str(vm_t)], \
            ["sh", "-c", cmd]

    def run_tier(self, tier, out):
        """Run one tier, its results in OUT. True: tally them; False: the tier ended
        before it had results (its failure is counted); None: it had nothing to run."""
        t = self.target(tier)
        if tier == "lint":
            self.tee([self.script("tests", "lint.sh")], out)
        elif tier == "host":
            self.tee([self.script("tests", "run-suite.sh"),
                      os.path.join(self.info["MMEXT_BUILD"], "guest", "bin", "tests.list"),
                      self.script("tests", "host.list")], out)
        elif tier == "host-asan":
            self.tee([self.script("tests", "run-suite.sh"),
                      os.path.join(self.info["MMEXT_BUILD"], "guest-asan", "bin",
                                   "tests.list")], out)
        elif tier == "fuzz":
            self.fuzz(out)
        elif t and not t.distro:
            vm_args, cmd = self.vm_cmd(t)
            self.guest(tier, t, cmd, out, vm_args)
        elif t:
            return self.distro(tier, t, out)
        elif tier in ("kcsan", "syzkaller", "installed"):
            # Their own runners build their kernels and print RESULT lines.
            rc = self.tee([self.script("tests", tier, "run.sh")], out,
                          stderr=subprocess.STDOUT)
            with open(out, errors="replace") as f:
                failed = re.search(r"^RESULT .* fail ", f.read(), re.M)
            if rc and not failed:
                self.totals.fail(f"{tier}: its runner failed without a result "
                                 f"({self.logs}/{tier}.tap)")
        elif tier == "mainline":
            self.mainline(out)
        return True

    def fuzz(self, out):
        log = os.path.join(self.logs, "fuzz.log")
        secs = os.environ.get("FUZZ_SECONDS")
        cmd = ["make", "-s", "-C", self.script("tests", "fuzz"), "run"] + \
            ([f"FUZZ_SECONDS={secs}"] if secs else [])
        with open(log, "wb") as f:
            rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT,
                                env=self.env).returncode
        with open(log, errors="replace") as f:
            text = f.read()
        if rc == 0:
            line = "RESULT maps_parser_fuzz pass 1 0 0"
        else:
            print("\n".join(text.splitlines()[-30:]), flush=True)
            line = "RESULT maps_parser_fuzz fail 0 1 0"
        print(line, flush=True)
        with open(out, "w") as f:
            f.write(line + "\n")
        for ln in text.splitlines():
            if re.match(r"Done|#[0-9]+ *DONE", ln):
                print("# " + ln, flush=True)

    def distro(self, tier, target, out):
        """A distro tier: its kernel, built here (a configuration that fails fails its
        tier only), then its guest."""
        open(out, "w").close()
        if not (os.environ.get("DISTRO_PARTS") or DISTRO_PARTS).strip():
            print(f"### tier {tier}: nothing to run "
                  f"(DISTRO_PARTS={os.environ.get('DISTRO_PARTS', '')})", flush=True)
            return None
        k = target.kernel
        blog = os.path.join(self.logs, f"build-{k}-distro.log")
        with open(blog, "wb") as f:
            rc = subprocess.run([self.script("scripts", "kernel.sh"), "build", k], stdout=f,
                                stderr=subprocess.STDOUT,
                                env=target.env(self.env)).returncode
        if rc:
            with open(blog, errors="replace") as f:
                print("\n".join(f.read().splitlines()[-20:]), flush=True)
            self.totals.fail(f"{tier}: the {k}-distro kernel did not build ({blog})")
            return False
        vm_args, cmd = self.distro_cmd(target)
        self.guest(tier, target, cmd, out, vm_args)
        return True

    def mainline(self, out):
        """Each mainline base's own run (its output in logs/mainline-BASE.log); its totals
        and failures join this run's."""
        for b in self.info["mainline_bases"]:
            ml = os.path.join(self.logs, f"mainline-{b}.log")
            js = ml + ".json"
            if os.path.exists(js):
                os.unlink(js)
            cmd = [sys.executable, os.path.abspath(__file__), "--base", b, "--tiers",
                   "stock patched", "--summary-json", js] + \
                (["--update-baseline"] if self.o["update_baseline"] else [])
            self.tee(cmd, ml, stderr=subprocess.STDOUT, env=dict(self.env, MMEXT_BASE=b))
            try:
                with open(js) as f:
                    sub = json.load(f)
            except (OSError, ValueError):
                self.totals.fail(f"mainline: the {b} run ended without totals ({ml})")
                continue
            self.totals.passed += sub["passed"]
            self.totals.failed += sub["failed"]
            self.totals.skipped += sub["skipped"]
            self.totals.failures += [f"mainline {b}: {x}" for x in sub["failures"]]
        open(out, "w").close()

    def update_baselines(self, tier, out):
        with open(out, errors="replace") as f:
            text = f.read()
        version = self.info["MMEXT_BASE_VERSION"]
        if tier == "stock-distro":
            try:
                with open(self.distro_baseline_path) as f:
                    old = f.read()
            except OSError:
                old = ""
            with open(self.distro_baseline_path + ".new", "w") as f:
                f.write(distro_baseline(text, old, self.base, version))
            os.replace(self.distro_baseline_path + ".new", self.distro_baseline_path)
            print(f"# baseline written to {self.distro_baseline_path}", flush=True)
        elif tier == "stock":
            with open(self.script("tests", "selftests.list")) as f:
                lst = f.read()
            with open(self.baseline_path, "w") as f:
                f.write(selftests_baseline(text, lst, self.base, version))
            print(f"# baseline written to {self.baseline_path}", flush=True)

    def list(self):
        """What a run would do, without doing it: each tier, and for a guest tier the
        target it boots."""
        for tier in self.tiers:
            t = self.target(tier)
            if tier == "mainline":
                t = " ".join(str(Target(k, b, debug=self.debug))
                             for b in self.info["mainline_bases"] for k in ("stock", "patched"))
            print(f"{tier}\t{t or ''}".rstrip())

    def main(self):
        self.check()
        if self.o["list"]:
            self.list()
            return 0
        start = time.monotonic()
        self.setup()
        fixed = read_fixed(self.fixed_path)
        for tier in self.tiers:
            print(f"### tier {tier}", flush=True)
            tier_start = time.monotonic()
            out = os.path.join(self.logs, f"{tier}.tap")
            t = self.target(tier)
            ran = self.run_tier(tier, out)
            if ran is None:
                continue
            if ran is False:
                print(f"### tier {tier}: {int(time.monotonic() - tier_start)}s", flush=True)
                continue
            bl = self.distro_baseline_path if "-distro" in tier else self.baseline_path
            with open(out, errors="replace") as f:
                self.totals.tally(tier, f.read(), read_baseline(bl), fixed, self.base,
                                  stock=bool(t) and t.kernel == "stock",
                                  say=lambda s: print(s, flush=True))
            upd = self.o["update_baseline"]
            if upd and tier == "stock-distro":
                self.update_baselines(tier, out)
            print(f"### tier {tier}: {int(time.monotonic() - tier_start)}s", flush=True)
            if upd and tier == "stock":
                self.update_baselines(tier, out)
        print("\n".join(self.totals.summary(" ".join(self.tiers),
                                            int(time.monotonic() - start))), flush=True)
        if self.o["summary_json"]:
            with open(self.o["summary_json"], "w") as f:
                json.dump(self.totals.to_json(), f)
        return 0 if self.totals.ok() else 1


def main(argv):
    opts = parse_args(argv)
    # A target named with its base (7.3/stock) is that base's run.
    bases = {t.base for t in (Target.parse(n) for n in (opts["tiers"] or "").split())
             if t and t.base}
    if len(bases) > 1:
        print("error: one base a run: " + " ".join(sorted(bases)), file=sys.stderr)
        return 1
    if bases:
        base = bases.pop()
        if opts["base"] and opts["base"] != base:
            print(f"error: --tiers names base {base}, --base (or MMEXT_BASE) {opts['base']}",
                  file=sys.stderr)
            return 1
        opts["base"] = base
        opts["tiers"] = " ".join(n.split("/", 1)[-1] for n in opts["tiers"].split())
    info = base_info(opts["base"])
    if isinstance(info, int):
        return info
    return Run(opts, info).main()


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        # As a shell script stopped by ^C ends: no traceback, 128 + SIGINT.
        sys.exit(130)
