#!/usr/bin/env python3
"""Prints a long-lived account SAS query string for the benchmark account.

The SAS goes in the query string of every wrk request, so wrk needs no
per-request signing. Account SAS string-to-sign (x-ms-version 2019-02-02, no
encryption scope line):

    account \n sp \n ss \n srt \n st \n se \n sip \n spr \n sv \n

signed with HMAC-SHA256 under the base64-decoded account key; the base64
signature is URL-encoded as `sig`. Standard library only, so any python3
works; when azure.data.tables is importable (/usr/bin/python3 on this
machine) the result is cross-checked against its generate_account_sas.
"""
import argparse
import base64
import hashlib
import hmac
import sys
import urllib.parse

DEFAULT_ACCOUNT = "devstoreaccount1"
DEFAULT_KEY = ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/"
               "K1SZFPTOtr/KBHBeksoGMGw==")


def make_sas(account, key, sp="rwdlacu", ss="t", srt="sco", st="2020-01-01T00:00:00Z",
             se="2099-01-01T00:00:00Z", sip="", spr="", sv="2019-02-02"):
    string_to_sign = "\n".join([account, sp, ss, srt, st, se, sip, spr, sv]) + "\n"
    digest = hmac.new(base64.b64decode(key), string_to_sign.encode("utf-8"), hashlib.sha256).digest()
    sig = base64.b64encode(digest).decode("ascii")
    params = [("sv", sv), ("ss", ss), ("srt", srt), ("sp", sp), ("se", se), ("st", st)]
    if sip:
        params.append(("sip", sip))
    if spr:
        params.append(("spr", spr))
    params.append(("sig", sig))
    return "&".join(f"{k}={urllib.parse.quote(v, safe='')}" for k, v in params)


def cross_check(account, key):
    """Returns an error text if the SDK computes a different sig, else None.

    The SDK's ResourceTypes knows only service and object ("so"), so the
    comparison signs the same fields with srt=so; the token printed uses
    srt=sco because Create Table needs the container type.
    """
    ours = make_sas(account, key, srt="so")
    try:
        from datetime import datetime, timezone
        from azure.core.credentials import AzureNamedKeyCredential
        from azure.data.tables import (AccountSasPermissions, ResourceTypes,
                                       generate_account_sas)
    except Exception:  # SDK not installed for this interpreter: nothing to compare.
        return None
    sdk = generate_account_sas(
        AzureNamedKeyCredential(account, key),
        resource_types=ResourceTypes(service=True, container=True, object=True),
        permission=AccountSasPermissions(read=True, write=True, delete=True, list=True,
                                         add=True, create=True, update=True),
        expiry=datetime(2099, 1, 1, tzinfo=timezone.utc),
        start=datetime(2020, 1, 1, tzinfo=timezone.utc))
    sdk_sig = urllib.parse.parse_qs(sdk)["sig"][0]
    our_sig = urllib.parse.parse_qs(ours)["sig"][0]
    if sdk_sig != our_sig:
        return f"SDK sig {sdk_sig} != ours {our_sig} (SDK token: {sdk})"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--account", default=DEFAULT_ACCOUNT)
    ap.add_argument("--key", default=DEFAULT_KEY)
    ap.add_argument("--check", action="store_true", help="cross-check against azure.data.tables")
    args = ap.parse_args()
    sas = make_sas(args.account, args.key)
    if args.check:
        err = cross_check(args.account, args.key)
        if err:
            print(err, file=sys.stderr)
            return 1
    print(sas)
    return 0


if __name__ == "__main__":
    sys.exit(main())
