"""Checks request trace files (tablestone --trace; docs/observability.md, "Request trace").

    check_trace.py DIR_OR_FILE...

Every line must be one JSON object carrying every field of the format (null where not
applicable) with the right type, and no line may contain an account key the suite uses, a
SharedKey signature or an unredacted SAS `sig=` value. scripts/test.sh runs it on the traces
the Python e2e suite wrote (TABLESTONE_E2E_TRACE_DIR, harness.py); test_trace.py uses
check_line on its own traces. Exit status 0 when every file passes.
"""

import base64
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402

# Field -> accepted JSON types (None = null allowed).
STRING_OR_NULL = (str, type(None))
INT_OR_NULL = (int, type(None))
FIELDS = {
    "time": (str,),
    "requestId": (str,),
    "client": STRING_OR_NULL,
    "method": (str,),
    "url": (str,),
    "account": STRING_OR_NULL,
    "operation": STRING_OR_NULL,
    "table": STRING_OR_NULL,
    "partitionKey": STRING_OR_NULL,
    "rowKey": STRING_OR_NULL,
    "status": (int,),
    "errorCode": STRING_OR_NULL,
    "totalUs": (int,),
    "parseUs": (int,),
    "authUs": (int,),
    "storageUs": (int,),
    "serialiseUs": (int,),
    "waitUs": (int,),
    "rowsScanned": INT_OR_NULL,
    "rowsReturned": INT_OR_NULL,
}
BODY_FIELDS = {
    "requestHeaders": (dict,),
    "requestBody": (str,),
    "requestBodyTruncated": (bool,),
    "responseHeaders": (dict,),
    "responseBody": (str,),
    "responseBodyTruncated": (bool,),
}
TIME_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
# A SAS signature that is not the redaction marker, and a SharedKey Authorization value.
SIG_RE = re.compile(r"(?i)(?:^|[?&\"])sig=(?!REDACTED(?:[&\"]|$))")
SHARED_KEY_RE = re.compile(r"SharedKey(?:Lite)? [A-Za-z0-9]+:[A-Za-z0-9+/=]{20,}")


def secrets():
    """The account keys the suite uses (harness and test_auth's extra accounts)."""
    keys = [harness.ACCOUNT_KEY]
    keys += [base64.b64encode(c * 32).decode() for c in (b"1", b"b", b"2")]  # test_auth KEY1, KEY1B, KEY2
    return keys


def check_line(text, keys=None, bodies=None):
    """Problems of one trace line (empty list when fine). bodies: True/False to require the
    header/body fields or their absence, None to accept either."""
    problems = []
    for key in keys if keys is not None else secrets():
        if key in text:
            problems.append("contains an account key")
    if SIG_RE.search(text):
        problems.append("contains an unredacted sig= value")
    if SHARED_KEY_RE.search(text):
        problems.append("contains a SharedKey signature")
    try:
        line = json.loads(text)
    except ValueError as e:
        return problems + ["not JSON: %s" % e]
    if not isinstance(line, dict):
        return problems + ["not a JSON object"]
    for name, types in FIELDS.items():
        if name not in line:
            problems.append("missing field %s" % name)
        elif not isinstance(line[name], types) or isinstance(line[name], bool) and bool not in types:
            problems.append("field %s has type %s" % (name, type(line[name]).__name__))
    if problems:
        return problems
    if not TIME_RE.match(line["time"]):
        problems.append("time is not RFC 3339 UTC with milliseconds: %r" % line["time"])
    if not 100 <= line["status"] <= 599:
        problems.append("status out of range: %r" % line["status"])
    for name in ("totalUs", "parseUs", "authUs", "storageUs", "serialiseUs", "waitUs"):
        if line[name] < 0:
            problems.append("%s is negative" % name)
    if line["operation"] == "QueryEntities" and line["status"] == 200:
        if line["rowsScanned"] is None or line["rowsReturned"] is None:
            problems.append("a query page without rowsScanned/rowsReturned")
        elif line["rowsReturned"] > line["rowsScanned"]:
            problems.append("rowsReturned > rowsScanned")
    has_bodies = any(name in line for name in BODY_FIELDS)
    if bodies is False and has_bodies:
        problems.append("carries headers/bodies without --traceBodies")
    if bodies is True or has_bodies:
        for name, types in BODY_FIELDS.items():
            if not isinstance(line.get(name), types):
                problems.append("field %s missing or of the wrong type" % name)
        for name in ("requestHeaders", "responseHeaders"):
            for header, value in (line.get(name) or {}).items():
                if header.lower() == "authorization" and value != "REDACTED":
                    problems.append("Authorization not redacted")
    return problems


def check_file(path, keys=None):
    """(lines, problems) of one trace file."""
    problems = []
    count = 0
    with open(path, "rb") as f:
        for number, raw in enumerate(f, 1):
            count += 1
            try:
                text = raw.decode("utf-8").rstrip("\n")
            except UnicodeDecodeError:
                problems.append("%s:%d: not UTF-8" % (path, number))
                continue
            for p in check_line(text, keys):
                problems.append("%s:%d: %s" % (path, number, p))
    return count, problems


def main(argv):
    files = []
    for arg in argv:
        if os.path.isdir(arg):
            files += sorted(os.path.join(arg, n) for n in os.listdir(arg) if n.endswith(".jsonl"))
        else:
            files.append(arg)
    if not files:
        print("check_trace: no trace files in %s" % " ".join(argv))
        return 1
    total = 0
    problems = []
    for path in files:
        count, found = check_file(path)
        total += count
        problems += found
    for p in problems[:50]:
        print("check_trace: " + p)
    if total == 0:
        problems.append("no lines")
        print("check_trace: the trace files are empty")
    print("check_trace: %d files, %d lines, %d problems" % (len(files), total, len(problems)))
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
