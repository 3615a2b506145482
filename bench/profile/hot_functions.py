#!/usr/bin/env python3
"""The hot functions of callgrind dumps as a gold --section-ordering-file.

Usage: hot_functions.py BINARY DUMP [DUMP...] > hot_sections.txt

Reads the callgrind dumps (any number, e.g. bench/callgrind/write_path.sh's get.out insert.out
...), keeps the functions of BINARY's own object that ran, and prints one line per function, the
hottest first (self instructions summed over the dumps, each dump weighted equally per request
kind), as the input section names that `-ffunction-sections` gives them: `.text.<mangled>` and,
for the functions gcc placed by its own guess, `.text.hot.<mangled>`. Callgrind names functions
demangled; the mangled names come from `nm` of BINARY (`nm -C` prints them in the same order).
A name that is missing from a later build is harmless: gold ignores a line no section matches,
and the sections not named keep their usual order after the named ones.
"""
import collections
import re
import subprocess
import sys

binary, dumps = sys.argv[1], sys.argv[2:]


def nm(*flags):
    out = subprocess.run(["nm", "--defined-only", *flags, binary], check=True,
                         capture_output=True, text=True).stdout.splitlines()
    return [line.split(" ", 2) for line in out]


# Text symbols only, mangled and demangled side by side (same order in both listings).
mangled_of = collections.defaultdict(list)
for raw, dem in zip(nm(), nm("-C")):
    if len(raw) == 3 and raw[1] in "tTwW" and raw[0] == dem[0]:
        mangled_of[dem[2]].append(raw[2])

weight = collections.Counter()
for path in dumps:
    names, obs = {}, {}
    ob = fn = None
    self_ir = collections.Counter()
    skip_next = False
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("ob="):
            m = re.match(r"\((\d+)\)(?: (.*))?", line[3:])
            if m.group(2) is not None:
                obs[m.group(1)] = m.group(2)
            ob = obs.get(m.group(1))
        elif line.startswith("fn="):
            m = re.match(r"\((\d+)\)(?: (.*))?", line[3:])
            if m.group(2) is not None:
                names[m.group(1)] = m.group(2)
            fn = re.sub(r"'\d+$", "", names.get(m.group(1), ""))  # callgrind's recursion mark
        elif line.startswith(("cfn=", "cob=")):
            m = re.match(r"\((\d+)\)(?: (.*))?", line[4:])
            if m.group(2) is not None:
                (names if line[1] == "f" else obs)[m.group(1)] = m.group(2)
        elif line.startswith("calls="):
            skip_next = True  # the next cost line is the call's inclusive cost
        elif line and (line[0].isdigit() or line[0] in "+-*"):
            if skip_next:
                skip_next = False
                continue
            parts = line.split()
            if ob and ob.endswith("/" + binary.split("/")[-1]) and len(parts) > 1:
                self_ir[fn] += int(parts[1])
    total = sum(self_ir.values()) or 1
    for f, ir in self_ir.items():
        weight[f] += ir / total

printed = set()
for f, _ in weight.most_common():
    for sym in mangled_of.get(f, []):
        if sym.endswith(".cold") or ".cold." in sym:
            continue  # the split-off cold part stays in .text.unlikely
        for section in (f".text.{sym}", f".text.hot.{sym}"):
            if section not in printed:
                printed.add(section)
                print(section)
