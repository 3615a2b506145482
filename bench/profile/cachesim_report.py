#!/usr/bin/env python3
"""Per-request cost of a callgrind dump with cache simulation, by shared object and function.

Usage: cachesim_report.py DUMP COUNT_REGEX [TOP]: the requests are the calls of the functions whose
names match COUNT_REGEX; prints Ir, I1 misses, D1 misses (reads + writes) and last-level misses
(instruction + data) per request by object, and with TOP > 0 the TOP functions by misses.
Used by cachesim.sh.
"""
import re, sys, collections
path, count_re, top = sys.argv[1], re.compile(sys.argv[2]), int(sys.argv[3])
by_fn = collections.defaultdict(lambda: [0] * 9)
events, names, obs = None, {}, {}
self_cost = collections.defaultdict(lambda: [0] * 9)  # by object
calls = 0
cur_ob = cur_fn = None
pending_calls = None
def name(table, text):
    m = re.match(r"\((\d+)\)(?: (.*))?", text)
    if m.group(2) is not None: table[m.group(1)] = m.group(2)
    return table.get(m.group(1), "?")
fn_names = {}
for line in open(path):
    line = line.rstrip("\n")
    if line.startswith("events:"):
        events = line.split()[1:]
    elif line.startswith("ob="):
        cur_ob = name(obs, line[3:])
    elif line.startswith("fn="):
        cur_fn = name(fn_names, line[3:])
    elif line.startswith("cob="):
        name(obs, line[4:])
    elif line.startswith("cfn="):
        callee = name(fn_names, line[4:])
        pending_calls = callee
    elif line.startswith("calls="):
        if pending_calls is not None and count_re.search(pending_calls):
            calls += int(line[6:].split()[0])
        pending_calls = "call-line"
    elif line and (line[0].isdigit() or line[0] in "+-*"):
        if pending_calls == "call-line":  # the inclusive cost of the call: not self cost
            pending_calls = None
            continue
        pending_calls = None
        parts = line.split()[1:]
        for i, v in enumerate(parts):
            self_cost[cur_ob][i] += int(v)
            by_fn[(cur_ob, cur_fn)][i] += int(v)
idx = {e: i for i, e in enumerate(events)}
def per(c):
    get = lambda e: c[idx[e]] if e in idx else 0
    return (get("Ir"), get("I1mr"), get("D1mr") + get("D1mw"), get("ILmr") + get("DLmr") + get("DLmw"))
n = max(calls, 1)
total = [sum(c[i] for c in self_cost.values()) for i in range(len(events))]
print(f"requests {calls}")
print(f"{'object':40s} {'Ir':>9s} {'I1 miss':>8s} {'D1 miss':>8s} {'LL miss':>8s}  (per request)")
for ob, c in sorted(self_cost.items(), key=lambda kv: -kv[1][0]):
    ir, i1, d1, ll = per(c)
    if ir / n < 50: continue
    print(f"{ob.split('/')[-1][:40]:40s} {ir/n:9.0f} {i1/n:8.1f} {d1/n:8.1f} {ll/n:8.1f}")
ir, i1, d1, ll = per(total)
print(f"{'all':40s} {ir/n:9.0f} {i1/n:8.1f} {d1/n:8.1f} {ll/n:8.1f}")
# TOP=N: the functions with the most misses (I1 + D1 + 10 x last level, a rough weight of their cost).
if top:
    weight = lambda c: per(c)[1] + per(c)[2] + 10 * per(c)[3]
    print(f"{'function (object)':100s} {'Ir':>8s} {'I1':>7s} {'D1':>7s} {'LL':>6s}")
    for (ob, fn), c in sorted(by_fn.items(), key=lambda kv: -weight(kv[1]))[:top]:
        ir, i1, d1, ll = per(c)
        print(f"{(fn[:80] + ' (' + ob.split('/')[-1][:14] + ')'):100s} {ir/n:8.0f} {i1/n:7.1f} {d1/n:7.1f} {ll/n:6.1f}")
