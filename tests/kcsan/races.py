#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# Classify the KCSAN reports of the kcsan tier's guests and write its summary.
#
#   races.py KTREE BASE_TAG LOGROOT
#
# Reads LOGROOT/KERNEL-cCPUS/{dmesg.log,run.txt} (run.txt: the guest's "seconds",
# "result" and "why" lines, from tests/kcsan/run.sh), writes LOGROOT/summary.md and
# prints "RESULT kcsan-ours pass|fail P F S". Reports are deduplicated by their title
# ("data-race in X / Y"). A report is OURS when the first frame of either access is a
# function the queue adds or changes: a function named in a hunk header of
# "git diff -U0 BASE_TAG..HEAD" (the function a changed line is in, or the one before
# added code) or defined on an added line, outside tools/ and Documentation/; STOCK
# otherwise. kcsan-ours fails on an OURS race the stock kernel's runs did not show too
# (a race there is in stock code that the queue merely touches: it is listed for a look).
import os
import re
import subprocess
import sys

PREFIX = re.compile(r'^(<\d+>)?(\[[^\]]*\] ?)?')
ACCESS = re.compile(r'^(race at unknown origin, with )?'
                    r'(read|write|read-write)( \(marked\))?( \(reordered\))? to 0x')


def our_functions(ktree, base):
    diff = subprocess.run(['git', '-C', ktree, 'diff', '-U0', f'{base}..HEAD', '--',
                           '.', ':!tools', ':!Documentation'],
                          capture_output=True, text=True, check=True).stdout
    names = set()

    def add(text):
        m = re.search(r'SYSCALL_DEFINE\d\((\w+)', text)
        if m:
            names.update(p + m.group(1) for p in ('__do_sys_', '__se_sys_', '__x64_sys_'))
            return
        m = re.search(r'(\w+)\s*\(', text)
        if m and m.group(1) not in ('if', 'for', 'while', 'switch', 'return', 'sizeof'):
            names.add(m.group(1))

    for line in diff.splitlines():
        if line.startswith('@@'):
            add(line.split('@@', 2)[2])
        elif re.match(r'^\+[A-Za-z_]', line) and not line.startswith('+++') \
                and not line.rstrip().endswith(';'):
            add(line[1:])
    return names


def reports(path):
    """Yield (title, [first frame of each access]) for each KCSAN report in a dmesg."""
    title, frames, want = None, [], False
    with open(path, errors='replace') as f:
        for raw in f:
            line = PREFIX.sub('', raw.rstrip('\n'))
            m = re.match(r'BUG: KCSAN: (.*)', line)
            if m:
                if title:
                    yield title, frames
                title = re.sub(r'\+0x[0-9a-f]+/0x[0-9a-f]+', '', m.group(1)).strip()
                frames, want = [], False
            elif title and ACCESS.match(line):
                want = True
            elif title and want and line.strip():
                frames.append(line.strip().split('+')[0].split(' ')[0])
                want = False
            elif title and line.startswith('Reported by Kernel Concurrency Sanitizer'):
                yield title, frames
                title = None
    if title:
        yield title, frames


def main():
    ktree, base, root = sys.argv[1:4]
    ours = our_functions(ktree, base)
    runs = {}
    for d in sorted(os.listdir(root)):
        m = re.fullmatch(r'(stock|patched)-c(\d+)', d)
        if not m or not os.path.isfile(os.path.join(root, d, 'run.txt')):
            continue
        info = dict(l.rstrip('\n').split(' ', 1) for l in open(os.path.join(root, d, 'run.txt'))
                    if ' ' in l)
        out = os.path.join(root, d, 'output.log')
        if os.path.isfile(out):
            info['kcsan'] = ', '.join(
                m.group(1) for m in re.finditer(r'^# kcsan: ((?:setup_watchpoints|data_races): \d+)$',
                                                open(out, errors='replace').read(), re.M))
        races = {}
        dmesg = os.path.join(root, d, 'dmesg.log')
        if os.path.isfile(dmesg):
            for title, frames in reports(dmesg):
                r = races.setdefault(title, {'count': 0, 'frames': frames})
                r['count'] += 1
        runs[(m.group(1), int(m.group(2)))] = (info, races)

    stock_titles = set()
    for (kernel, _), (_, races) in runs.items():
        if kernel == 'stock':
            stock_titles.update(races)
    have_stock = any(k == 'stock' for k, _ in runs)

    bad = set()
    lines = ['# KCSAN tier', '',
             'Data races by title. OURS: the first frame of an access is a function the queue',
             'adds or changes (named with it); STOCK: neither is. On a stock run, the titles alone.', '']
    for (kernel, cpus), (info, races) in sorted(runs.items(), key=lambda x: (x[0][0] != 'patched', x[0][1])):
        lines.append(f'## {kernel}, {cpus} vCPUs')
        lines.append('')
        lines.append(f'- run time: {info.get("seconds", "?")} s')
        why = info.get('why', '')
        lines.append(f'- workload: {info.get("result", "?")}' + (f' ({why})' if why else ''))
        lines.append(f'- races: {len(races)} titles, {sum(r["count"] for r in races.values())} reports')
        if info.get('kcsan'):
            lines.append(f'- KCSAN counters: {info["kcsan"]}')
        if races:
            lines.append('')
        for title, r in sorted(races.items()):
            hit = sorted(set(r['frames']) & ours)
            seen = ('seen on stock' if title in stock_titles else
                    'not seen on stock' if have_stock else 'stock not run')
            if kernel == 'stock':
                cls = ''
            elif hit:
                cls = f'OURS ({", ".join(hit)}; {seen})'
                if title not in stock_titles:
                    bad.add(title)
            else:
                cls = f'STOCK ({seen})'
            lines.append(f'- `{title}` x{r["count"]}' + (f': {cls}' if cls else '') +
                         f'; first frames: {" / ".join(r["frames"]) or "?"}')
        lines.append('')
    with open(os.path.join(root, 'summary.md'), 'w') as f:
        f.write('\n'.join(lines))
    for title in sorted(bad):
        print(f'# kcsan-ours: not annotated: {title}')
    print(f'RESULT kcsan-ours {"fail" if bad else "pass"} {0 if bad else 1} {len(bad)} 0')


main()
