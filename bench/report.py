#!/usr/bin/env python3
"""Results of bench/run.sh: records them and prints the Markdown report.

  report.py --record RESULTS.jsonl key=value ... [json='{...}']
      appends one JSON object (key=value pairs, merged with the json object).
  report.py RESULTS.jsonl
      prints the report: medians over repetitions, ratios tablestone/Azurite
      and tablestone/floor, startup, RSS, disk, big-table figures, targets.

Standard library only.
"""
import json
import statistics
import sys
from collections import defaultdict

TS, AZ, FL, TLS = "tablestone", "azurite", "floor", "https"
WRITE_SCENARIOS = ["insert", "upsert", "merge", "delete"]
SCENARIOS = ["get", "insert", "upsert", "merge", "delete", "page", "scan", "batch"]
SCENARIO_TEXT = {
    "get": "point GET (existing entity)",
    "insert": "POST insert (unique keys)",
    "upsert": "PUT upsert (existing keys)",
    "merge": "MERGE (If-Match *)",
    "delete": "DELETE (If-Match *)",
    "page": "GET partition page (1000 entities)",
    "scan": "filtered scan (first response)",
    "batch": "$batch of 100 creates (requests/s)",
    "getnew": "point GET, a new connection per request",
}


def record(path, items):
    obj = {}
    for item in items:
        key, _, value = item.partition("=")
        if key == "json":
            obj.update(json.loads(value))
            continue
        if key not in ("cmd", "env"):
            try:
                value = int(value)
            except ValueError:
                try:
                    value = float(value)
                except ValueError:
                    pass
        obj[key] = value
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(obj) + "\n")


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(v, digits=0, unit=""):
    if isinstance(v, dict):  # a wrk_stats result with no completed request
        return f"< {v['below']:.1f} (none completed)"
    if v is None:
        return "n/m"
    if isinstance(v, float) and digits == 0 and abs(v) < 10:
        digits = 2
    return f"{v:,.{digits}f}{unit}"


def ratio(a, b, digits=2):
    if isinstance(b, dict) and a is not None:
        return f"> {a / b['below']:.{digits}f}x"
    if a is None or b is None or b == 0 or isinstance(a, dict):
        return "n/m"
    return f"{a / b:.{digits}f}x"


class Results:
    def __init__(self, rows):
        self.rows = rows
        self.meta = next((r for r in rows if r.get("kind") == "meta"), {})
        self.meta_end = next((r for r in rows if r.get("kind") == "meta_end"), {})
        self.wrk = defaultdict(list)
        for r in rows:
            if r.get("kind") == "wrk":
                self.wrk[(r["server"], r["scenario"], int(r["conns"]))].append(r)

    def of(self, kind, server, **match):
        for r in self.rows:
            if r.get("kind") == kind and r.get("server") == server and all(r.get(k) == v for k, v in match.items()):
                return r
        return None

    def wrk_stats(self, server, scenario, conns):
        reps = self.wrk.get((server, scenario, conns))
        if not reps:
            return None
        ops = [r["requests"] * 1e6 / max(1, r["duration_us"]) for r in reps]
        errors = sum(r["non2xx"] + r["socket_errors"] for r in reps)
        requests = sum(r["requests"] for r in reps)
        zero_reps = sum(1 for r in reps if r["requests"] == 0)
        if errors == 0 and zero_reps * 2 > len(reps):
            # Nothing completed within the run: every request in flight took
            # longer than the duration, so the rate is below conns/duration.
            bound = conns * 1e6 / max(r["duration_us"] for r in reps)
            return {"ops": None, "p50": None, "p99": None, "errors": 0, "reps": len(reps), "cmd": reps[0]["cmd"],
                    "below": bound}
        if errors > 0.01 * max(1, requests):
            # Mostly failed requests: their rate is not a figure.
            return {"ops": None, "p50": None, "p99": None, "errors": errors, "reps": len(reps), "cmd": reps[0]["cmd"]}
        done = [r for r in reps if r["requests"]]
        return {
            "ops": med(ops),
            "p50": med([r["p50_us"] / 1000 for r in done]),
            "p99": med([r["p99_us"] / 1000 for r in done]),
            "errors": errors,
            "reps": len(reps),
            "cmd": reps[0]["cmd"],
        }


def ops(stats):
    """ops/s, or the stats themselves when only an upper bound is known."""
    if stats and stats.get("below") is not None:
        return stats
    return stats["ops"] if stats else None


def num(v):
    return isinstance(v, (int, float)) and v > 0


def per100(v):
    if isinstance(v, dict):
        return f"< {v['below'] * 100:,.0f} (none completed)"
    return fmt(v * 100 if v is not None else None)


def short_cmd(cmd):
    """The wrk part of a recorded command (the env part is listed once)."""
    i = cmd.find("taskset")
    return cmd[i:] if i >= 0 else cmd


def report(res):
    out = []
    p = out.append
    m = res.meta
    smoke = m.get("smoke") == 1
    p("# tablestone benchmark report" + (" (SMOKE: ~1 s per scenario, not figures)" if smoke else ""))
    p("")
    p("```")
    p(m.get("env", "").rstrip())
    p(f"total time: {res.meta_end.get('seconds', '?')} s, failures: {res.meta_end.get('failures', '?')}")
    p("```")
    p("")
    p("n/m = not measured (server not run or scenario failed; see run.log). Latencies in ms. "
      "Ratios: tablestone/Azurite and tablestone/floor of ops/s (higher is better).")
    p("")

    # ---- wrk ----
    conns_list = sorted({k[2] for k in res.wrk})
    p("## Server-side load (wrk, SAS in the query string)")
    p("")
    p("| scenario | conns | tablestone ops/s | p50 | p99 | Azurite ops/s | p50 | p99 | floor ops/s | ts/Azurite | ts/floor | errors ts/az | command |")
    p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for scen in SCENARIOS:
        for c in conns_list:
            t, a = res.wrk_stats(TS, scen, c), res.wrk_stats(AZ, scen, c)
            if not t and not a:
                continue
            f = res.wrk_stats(FL, "get", c)
            g = lambda s, k: (s if k == "ops" and s.get("below") is not None else s[k]) if s else None
            show_floor = scen == "get" or scen in WRITE_SCENARIOS
            cmd = short_cmd((t or a)["cmd"])
            p(f"| {SCENARIO_TEXT[scen]} | {c} | {fmt(g(t, 'ops'))} | {fmt(g(t, 'p50'), 2)} | {fmt(g(t, 'p99'), 2)} "
              f"| {fmt(g(a, 'ops'))} | {fmt(g(a, 'p50'), 2)} | {fmt(g(a, 'p99'), 2)} "
              f"| {fmt(g(f, 'ops')) if show_floor else ''} | {ratio(g(t, 'ops'), g(a, 'ops'))} "
              f"| {ratio(g(t, 'ops'), g(f, 'ops')) if show_floor else ''} "
              f"| {g(t, 'errors') if t else '-'}/{g(a, 'errors') if a else '-'} | `{cmd}` |")
    for c in conns_list:
        f = res.wrk_stats(FL, "get", c)
        if f:
            fi = next((r for r in res.rows if r.get("kind") == "floorinfo"), {})
            p(f"| floor: fixed 200, {fi.get('body_bytes', '?')}-byte body, {fi.get('threads', '?')} thread(s) | {c} | | | | | | "
              f"| {fmt(f['ops'])} (p50 {fmt(f['p50'], 2)}, p99 {fmt(f['p99'], 2)}) | | | {f['errors']} | `{short_cmd(f['cmd'])}` |")
    p("")
    envs = {}
    for (server, scen, c), reps in sorted(res.wrk.items()):
        cmd = reps[0]["cmd"]
        envs.setdefault(scen, cmd[: cmd.find("taskset")].strip())
    if envs:
        p("Environment of each wrk scenario (example values; partitions are unique per run/rep):")
        p("")
        for scen, env in envs.items():
            p(f"- `{scen}`: `{env}`")
        p("")
    b = [(c, res.wrk_stats(TS, "batch", c), res.wrk_stats(AZ, "batch", c)) for c in conns_list]
    b = [x for x in b if x[1] or x[2]]
    if b:
        p("Batch entities/s (100 x requests/s): " + "; ".join(
            f"{c} conns: tablestone {per100(ops(t))}, Azurite {per100(ops(a))}"
            for c, t, a in b))
        p("")

    # ---- HTTPS ----
    https_rows = [(scen, c) for scen in ("get", "page", "getnew") for c in conns_list + [8]
                  if res.wrk_stats(TLS, scen, c)]
    if https_rows:
        p("## HTTPS next to HTTP (the same tablestone binary, a self-signed RSA-2048 certificate)")
        p("")
        p("| scenario | conns | HTTP ops/s | HTTPS ops/s | HTTPS/HTTP | HTTPS p50 | p99 | errors | HTTPS command |")
        p("|---|---:|---:|---:|---:|---:|---:|---|---|")
        for scen, c in sorted(set(https_rows), key=lambda x: (["get", "page", "getnew"].index(x[0]), x[1])):
            h, t = res.wrk_stats(TS, scen, c), res.wrk_stats(TLS, scen, c)
            g = lambda st, k: st[k] if st else None
            p(f"| {SCENARIO_TEXT[scen]} | {c} | {fmt(g(h, 'ops'))} | {fmt(g(t, 'ops'))} | {ratio(g(t, 'ops'), g(h, 'ops'))} "
              f"| {fmt(g(t, 'p50'), 2)} | {fmt(g(t, 'p99'), 2)} | {g(t, 'errors')} | `{short_cmd(t['cmd'])}` |")
        p("")
        hs = {mode: [r for r in res.rows if r.get("kind") == "handshake" and r.get("mode") == mode] for mode in ("new", "reuse")}
        if hs["new"] or hs["reuse"]:
            n, r = (med([x["per_s"] for x in hs[m]]) if hs[m] else None for m in ("new", "reuse"))
            p(f"TLS handshakes one connection at a time (openssl s_time, one point GET per connection; connections/s, "
              f"median): full {fmt(n)}, resumed {fmt(r)} ({ratio(r, n)}). "
              f"`{(hs['new'] or hs['reuse'])[0]['cmd']}` (and -reuse)")
            p("")

    # ---- SDK ----
    sdk = defaultdict(dict)
    sdk_cmd = {}
    for r in res.rows:
        if r.get("kind") == "sdk":
            sdk[(r["op"], r["concurrency"])][r["server"]] = r
            sdk_cmd[r["server"]] = r["cmd"]
    if sdk:
        p("## Client-side load (JS SDK @azure/data-tables, Shared Key)")
        p("")
        p("| operation | concurrency | tablestone ops/s | p50 | p99 | Azurite ops/s | p50 | p99 | ts/Azurite | notes |")
        p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        order = {s: i for i, s in enumerate(SCENARIOS)}
        for (op, c), by in sorted(sdk.items(), key=lambda kv: (kv[0][1], order.get(kv[0][0], 99))):
            t, a = by.get(TS), by.get(AZ)

            def g(s, k):
                if not s or s.get("errors", 0) > 0.01 * max(1, s.get("ops", 0)):
                    return None  # failed calls: not a figure
                return s.get(k)
            p(f"| {op}{' (batch of 100)' if op == 'batch' else ''} | {c} | {fmt(g(t, 'ops_per_s'))} | {fmt(g(t, 'p50_ms'), 2)} "
              f"| {fmt(g(t, 'p99_ms'), 2)} | {fmt(g(a, 'ops_per_s'))} | {fmt(g(a, 'p50_ms'), 2)} | {fmt(g(a, 'p99_ms'), 2)} "
              f"| {ratio(g(t, 'ops_per_s'), g(a, 'ops_per_s'))} | "
              + "; ".join(f"{n}: {s['errors']} errors ({s.get('first_error', '')[:60]})" for n, s in ((TS, t), (AZ, a)) if s and s.get("errors"))
              + " |")
        p("")
        for s, cmd in sdk_cmd.items():
            p(f"- {s}: `{cmd}`")
        p("")

    # ---- queries ----
    p("## Queries (raw HTTP, continuation followed; median of repeats)")
    p("")
    p("| query | tablestone ms | Azurite ms | Azurite/tablestone (speed-up) | command |")
    p("|---|---:|---:|---:|---|")
    for what, text in (("partition", f"drain a {m.get('pt_n', '?')}-entity partition"),
                       ("scan", f"filtered scan over {m.get('scan_n', '?')} entities (10 match)"),
                       ("partition_cold", f"first drain of the {m.get('pt_n', '?')}-entity partition after loading (once)"),
                       ("scan_cold", "first filtered scan after loading (once)")):
        t, a = res.of("drain", TS, what=what), res.of("drain", AZ, what=what)
        g = lambda s: s["median_ms"] if s else None
        p(f"| {text} | {fmt(g(t), 2)} | {fmt(g(a), 2)} | {ratio(g(a), g(t), 1)} | `{(t or a or {}).get('cmd', '')}` |")
    fl = res.of("drain", "floor", what="scan")
    if fl:
        p(f"\nThe same filtered-scan command against the floor server (one request, its fixed answer): "
          f"{fl['median_ms']:.2f} ms: the Node client's and HTTP's own cost, included in every query time above "
          f"(`{fl['cmd']}`).")
    for s in (TS, AZ):
        sc = res.of("scancheck", s)
        if sc:
            p(f"\n{s}: the filtered scan's first response carried {sc['continuation_headers']} continuation header(s)"
              " (0 = the wrk scan figure is the whole scan).")
    p("")

    # ---- startup / RSS / disk / big ----
    p("## Startup, memory, disk, big table")
    p("")
    p("| figure | tablestone | Azurite | command |")
    p("|---|---:|---:|---|")

    def row(text, f, cmd_of=None):
        vals, cmd = [], ""
        for s in (TS, AZ):
            v, c = f(s)
            vals.append(v)
            cmd = cmd or (c or "")
        p(f"| {text} | {vals[0]} | {vals[1]} | `{cmd}` |")

    def startup(n_kind):
        def f(s):
            rows = [r for r in res.rows if r.get("kind") == "startup" and r["server"] == s]
            r = next((r for r in rows if (r["entities"] == 0) == (n_kind == 0)), None)
            if not r:
                return "n/m", ""
            return f"{fmt(r['startup_ms'], 1)} ms" + ("" if n_kind == 0 else f" ({r['entities']:,} entities)"), r["cmd"]
        return f

    def rss_idle(n_kind):
        def f(s):
            rows = [r for r in res.rows if r.get("kind") == "startup" and r["server"] == s]
            r = next((r for r in rows if (r["entities"] == 0) == (n_kind == 0)), None)
            if not r:
                return "n/m", ""
            return f"{fmt(r['rss_idle_mb'], 1)} MB" + ("" if n_kind == 0 else f" ({r['entities']:,})"), "VmRSS after the idle wait of the startup command"
        return f

    def simple(kind, key, unit, **match):
        def f(s):
            r = res.of(kind, s, **match)
            if not r or r.get(key) in (None, ""):
                return "n/m", ""
            extra = f" ({r['entities']:,})" if "entities" in r else ""
            return f"{fmt(r[key], 1)}{unit}{extra}", r.get("cmd", "VmRSS of the server pid, /proc/PID/status" if kind == "rss" else "")
        return f

    def disk(s):
        r = res.of("disk", s)
        if not r:
            return "n/m", ""
        per = (r["bytes"] - r.get("empty_bytes", 0)) / max(1, r["entities"])
        return f"{per:,.0f} B ({r['bytes'] / 1e6:,.1f} MB / {r['entities']:,})", r["cmd"]

    def load_rate(s):
        rs = [r for r in res.rows if r.get("kind") == "load" and r["server"] == s and r.get("table") == "big"]
        if not rs:
            return "n/m", ""
        loaded = sum(r["loaded"] for r in rs)
        seconds = sum(r["seconds"] for r in rs)
        how = "" if all(r.get("mode", "batch") == "batch" for r in rs) else ", single inserts: no $batch"
        parts = " + ".join(f"{r['entities_per_s']:,}/s" for r in rs)
        return (f"{loaded / seconds:,.0f} entities/s ({loaded:,} in {seconds:.1f} s{how}"
                + (f"; parts {parts}" if len(rs) > 1 else "") + ")"), rs[0]["cmd"]

    def deep(key):
        def f(s):
            r = res.of("deep", s)
            if not r:
                return "n/m", ""
            if key == "ratio":
                return f"{r['deep_over_first']:.2f}x (page {r['deep']['page']} of {r['pages']})", r["cmd"]
            return f"{r[key]['median_ms']:.2f} ms ({r['entities']:,})", r["cmd"]
        return f

    def bigscan(s):
        r = res.of("drain", s, what="bigscan")
        if not r:
            return "n/m", ""
        rate = r["scanned"] / (r["median_ms"] / 1000)
        return f"{r['median_ms']:,.0f} ms = {rate / 1e6:.2f} M entities/s ({r['scanned']:,}, {r['pages']} pages)", r["cmd"]

    row("startup, empty (spawn to first 200)", startup(0))
    row("startup with the big table", startup(1))
    row("RSS idle, empty", rss_idle(0))
    row("RSS idle after restart with the big table", rss_idle(1))
    row("RSS right after loading the big table", simple("rss", "rss_mb", " MB", what="loaded"))
    row("RSS after the big-table queries", simple("rss", "rss_mb", " MB", what="big_after_queries"))
    row("RSS after the load scenarios", simple("rss", "rss_mb", " MB", what="after_load_scenarios"))
    row("bytes on disk per entity", disk)
    row("bulk load ($batch of 100, 16 connections)", load_rate)
    row("clean stop after loading (signal to exit)", simple("stop", "stop_ms", " ms"))
    row("big table: first page of 1000 (ms)", deep("first"))
    row("big table: page at 50% (by continuation)", deep("mid"))
    row("big table: page at 90% (by continuation)", deep("deep"))
    row("big table: deep page / first page", deep("ratio"))
    row("big table: filtered scan (no match), full drain", bigscan)
    p("")

    # ---- targets ----
    p("## Targets (from this run)")
    p("")
    if smoke:
        p("Smoke run: no thresholds are checked.")
        p("")
        return "\n".join(out)
    p("| target | measured | verdict |")
    p("|---|---|---|")
    cmax = max(conns_list) if conns_list else 64

    def verdict(ok):
        return "n/m" if ok is None else ("PASS" if ok else "FAIL")

    def target(text, measured, ok):
        p(f"| {text} | {measured} | {verdict(ok)} |")

    def times_target(text, ts, az):
        """ts >= 10x az; az may be only an upper bound (none completed)."""
        if not num(ts) or az is None:
            return target(text, "n/m", None)
        if isinstance(az, dict):
            low = ts / az["below"]
            return target(text, f"> {low:.1f}x (Azurite completed none)", True if low >= 10 else None)
        return target(text, f"{ts / az:.1f}x", ts / az >= 10)

    t, f = res.wrk_stats(TS, "get", cmax), res.wrk_stats(FL, "get", cmax)
    r = ops(t) / ops(f) if num(ops(t)) and num(ops(f)) else None
    target(f"point GET >= 70% of the floor ({cmax} conns)", f"{r:.0%}" if r is not None else "n/m", None if r is None else r >= 0.7)
    p99 = t["p99"] if t else None
    target(f"point GET p99 < 5 ms ({cmax} conns)", f"{p99:.2f} ms" if p99 is not None else "n/m", None if p99 is None else p99 < 5)
    for scen in WRITE_SCENARIOS:
        t, a = res.wrk_stats(TS, scen, cmax), res.wrk_stats(AZ, scen, cmax)
        rf = ops(t) / ops(f) if num(ops(t)) and num(ops(f)) else None
        target(f"{scen} >= 50% of the floor ({cmax} conns)", f"{rf:.0%}" if rf is not None else "n/m", None if rf is None else rf >= 0.5)
        times_target(f"{scen} >= 10x Azurite ({cmax} conns)", ops(t), ops(a))
    for c in conns_list:
        t, a = res.wrk_stats(TS, "batch", c), res.wrk_stats(AZ, "batch", c)
        times_target(f"100-op batches >= 10x Azurite entities/s ({c} conns)", ops(t), ops(a))
    for what, text in (("partition", f"drain {m.get('pt_n', '?')}-entity partition"), ("scan", f"filtered scan over {m.get('scan_n', '?')}")):
        t, a = res.of("drain", TS, what=what), res.of("drain", AZ, what=what)
        ra = a["median_ms"] / t["median_ms"] if t and a else None
        target(f"{text} >= 10x faster than Azurite", f"{ra:.1f}x" if ra is not None else "n/m", None if ra is None else ra >= 10)
    st = [r for r in res.rows if r.get("kind") == "startup" and r["server"] == TS]
    e0 = next((r for r in st if r["entities"] == 0), None)
    e1 = next((r for r in st if r["entities"] > 0), None)
    target("startup <= 50 ms empty", f"{e0['startup_ms']:.1f} ms" if e0 else "n/m", None if not e0 else e0["startup_ms"] <= 50)
    target("startup <= 100 ms with 1M entities", f"{e1['startup_ms']:.1f} ms ({e1['entities']:,})" if e1 else "n/m",
           None if not e1 or e1["entities"] < 1_000_000 else e1["startup_ms"] <= 100)
    target("idle RSS <= 30 MB", f"{e0['rss_idle_mb']:.1f} MB" if e0 else "n/m", None if not e0 else e0["rss_idle_mb"] <= 30)
    loaded = res.of("rss", TS, what="loaded")
    worst = max([x for x in [loaded and loaded.get("rss_mb"), e1 and e1["rss_idle_mb"]] if isinstance(x, (int, float))], default=None)
    target("RSS with 1M entities <= 300 MB (max of after-load and after-restart)",
           f"{worst:.1f} MB ({loaded['entities']:,})" if worst is not None and loaded else "n/m",
           None if worst is None or not loaded or loaded["entities"] < 1_000_000 else worst <= 300)
    d = res.of("deep", TS)
    target("deep page (90%) < 2x first page (2M-entity table)", f"{d['deep_over_first']:.2f}x ({d.get('entities', 0):,} entities)" if d else "n/m",
           None if not d else d["deep_over_first"] < 2)
    bs = res.of("drain", TS, what="bigscan")
    cores = int(m.get("server_ncpu", 1))
    rate = bs["scanned"] / (bs["median_ms"] / 1000) / cores if bs else None
    target(f"filtered scan >= 1M entities/s per core (server on {cores} core(s))",
           f"{rate / 1e6:.2f} M/s/core" if rate else "n/m", None if rate is None else rate >= 1e6)
    p("")
    return "\n".join(out)


def main(argv):
    if len(argv) >= 2 and argv[0] == "--record":
        record(argv[1], argv[2:])
        return 0
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    print(report(Results(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
