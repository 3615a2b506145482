#!/usr/bin/env python3
"""Spawn-to-first-200 of tablestone with a FRESH empty data directory.

Usage: startup.py BINARY [--runs 10] [--port 20103]. Polls an authenticated
GET /devstoreaccount1/Tables (account SAS) every 1 ms; prints each run and the
median. Standard library only.
"""
import argparse
import http.client
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from make_sas import make_sas  # noqa: E402

KEY = ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/"
       "K1SZFPTOtr/KBHBeksoGMGw==")


def once(binary, port, sas):
    d = tempfile.mkdtemp(prefix="ts-startup-")
    data = os.path.join(d, "data")
    t0 = time.perf_counter()
    p = subprocess.Popen([binary, "--tableHost", "127.0.0.1", "--tablePort", str(port), "-s", "-l", data],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            if p.poll() is not None:
                sys.exit("server exited")
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
                c.request("GET", f"/devstoreaccount1/Tables?{sas}",
                          headers={"Accept": "application/json;odata=nometadata", "x-ms-version": "2019-02-02"})
                if c.getresponse().status == 200:
                    return (time.perf_counter() - t0) * 1000
            except OSError:
                pass
            time.sleep(0.001)
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait()
        shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--port", type=int, default=20103)
    a = ap.parse_args()
    sas = make_sas("devstoreaccount1", KEY)
    ms = [once(a.binary, a.port, sas) for _ in range(a.runs)]
    print("runs (ms):", " ".join(f"{m:.1f}" for m in ms))
    print(f"median: {statistics.median(ms):.1f} ms")


if __name__ == "__main__":
    main()
