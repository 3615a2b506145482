#!/usr/bin/env python3
"""Samples a server while bench/scale/run.sh drives it.

Every --interval seconds: VmRSS of --pid (/proc/PID/status) and the phase
named in --phase-file; every second also the storage gauges of
GET /_tablestone/metrics (write stalls begun, column families stalled now,
pending compaction bytes). Appends one JSON line per sample to --out until the
process exits or --stop-file appears. `--summary FILE` instead prints, per
phase and overall, the maximum RSS and the longest run of seconds with a
stalled column family. Standard library only.
"""
import argparse
import json
import os
import time
import urllib.request

GAUGES = {
    "tablestone_storage_write_stalls_total": "stalls_total",
    "tablestone_storage_stalled_column_families": "stalled_cfs",
    "tablestone_storage_pending_compaction_bytes": "pending_compaction_bytes",
    "tablestone_storage_memtable_bytes": "memtable_bytes",
}


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def scrape(url):
    out = {}
    try:
        with urllib.request.urlopen(url + "/_tablestone/metrics", timeout=2) as r:
            for line in r.read().decode().splitlines():
                name, _, value = line.partition(" ")
                if name in GAUGES:
                    out[GAUGES[name]] = float(value)
    except OSError:
        pass
    return out


def sample(args):
    last_scrape = 0.0
    with open(args.out, "a") as out:
        while not os.path.exists(args.stop_file):
            rss = rss_kb(args.pid)
            if rss is None:
                return
            now = time.time()
            try:
                phase = open(args.phase_file).read().strip()
            except OSError:
                phase = ""
            row = {"t": round(now, 3), "phase": phase, "rss_kb": rss}
            if now - last_scrape >= 1.0:
                last_scrape = now
                row.update(scrape(args.url))
            out.write(json.dumps(row) + "\n")
            out.flush()
            time.sleep(args.interval)


def summary(path):
    rows = [json.loads(line) for line in open(path)]
    phases = {}
    for r in rows:
        p = phases.setdefault(r["phase"], {"max_rss_mb": 0.0, "samples": 0})
        p["max_rss_mb"] = max(p["max_rss_mb"], r["rss_kb"] / 1024)
        p["samples"] += 1
    # Longest run of consecutive scrapes (1 s apart) with a stalled column family.
    longest = run = 0
    start = None
    for r in rows:
        if "stalled_cfs" not in r:
            continue
        if r["stalled_cfs"] > 0:
            if start is None:
                start = r["t"]
            run = r["t"] - start + 1.0
            longest = max(longest, run)
        else:
            start = None
    stalls = max((r.get("stalls_total", 0) for r in rows), default=0)
    result = {
        "max_rss_mb": round(max((p["max_rss_mb"] for p in phases.values()), default=0), 1),
        "phases": {k: round(v["max_rss_mb"], 1) for k, v in phases.items()},
        "longest_stalled_s_upper_bound": round(longest, 1),
        "write_stalls_total": int(stalls),
        "max_pending_compaction_mb": round(max((r.get("pending_compaction_bytes", 0) for r in rows), default=0) / 2**20, 1),
    }
    print(json.dumps(result))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pid", type=int)
    ap.add_argument("--url")
    ap.add_argument("--out")
    ap.add_argument("--phase-file")
    ap.add_argument("--stop-file")
    ap.add_argument("--interval", type=float, default=0.2)
    ap.add_argument("--summary")
    args = ap.parse_args()
    if args.summary:
        summary(args.summary)
    else:
        sample(args)


if __name__ == "__main__":
    main()
