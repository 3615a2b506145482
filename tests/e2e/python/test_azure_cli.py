"""Azure CLI (Debian 12's azure-cli 2.45) typed values, end to end.

`az storage entity insert/merge` takes `Name=value Name@odata.type=Edm.X` pairs and sends every
annotated value as a JSON string ("true", "42", "NaN", ...); the service reads those strings by the
annotation. These tests write every annotated Edm type through `az` with --connection-string, read
it back typed through azure-data-tables, and query/show/merge through `az` again.

`az` runs with a throwaway AZURE_CONFIG_DIR, telemetry and the survey off, and HTTP(S)_PROXY pointed
at a closed loopback port with only the server's host exempt, so it cannot reach any other host.
Skipped when `az` is missing, except in CI (CI=true), where scripts/install-deps.sh installs it.
"""

import json
import math
import os
import shutil
import subprocess
import tempfile
import uuid
from datetime import datetime, timezone

import pytest

from azure.data.tables import EdmType, EntityProperty

AZ = shutil.which("az")
if AZ is None and os.environ.get("CI") != "true":
    pytest.skip("the Azure CLI (`az`, Debian package azure-cli) is not installed; "
                "scripts/install-deps.sh installs it", allow_module_level=True)

GUID = "c9da6455-213d-42c9-9a79-3e9149a57833"


@pytest.fixture(scope="module")
def az_env(target):
    assert AZ, "az is missing although CI=true: scripts/install-deps.sh must install azure-cli"
    config = tempfile.mkdtemp(prefix="tablestone-az.")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AZURE_")}
    env.update({
        "AZURE_CONFIG_DIR": config,
        "AZURE_CORE_COLLECT_TELEMETRY": "false",
        "AZURE_CORE_SURVEY_MESSAGE": "false",
        "AZURE_CORE_NO_COLOR": "true",
        "AZURE_CORE_ONLY_SHOW_ERRORS": "true",
        # Anything but the server goes to a closed port: no update check or telemetry can leave.
        "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9",
        "NO_PROXY": target.host, "no_proxy": target.host,
    })
    yield env
    shutil.rmtree(config, ignore_errors=True)


def az(env, target, *args, check=True):
    """Runs `az storage entity ...` against the target; returns the parsed JSON output."""
    cmd = [AZ, "storage", "entity", *args, "--connection-string", target.connection_string, "--output", "json"]
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, check=False)
    if not check:
        return res
    assert res.returncode == 0, "az %s failed (%d): %s" % (args[0], res.returncode, res.stderr)
    # az prints NaN/Infinity bare, which Python's json module reads.
    return json.loads(res.stdout) if res.stdout.strip() else None


def test_every_annotated_type_through_az(az_env, target, table):
    tn = table.table_name
    az(az_env, target, "insert", "--table-name", tn, "--entity",
       "PartitionKey=p", "RowKey=r",
       "Flag=true", "Flag@odata.type=Edm.Boolean",
       "Off=False", "Off@odata.type=Edm.Boolean",
       "I32=-42", "I32@odata.type=Edm.Int32",
       "I64=9007199254740993", "I64@odata.type=Edm.Int64",
       "D=1.5", "D@odata.type=Edm.Double",
       "Nan=NaN", "Nan@odata.type=Edm.Double",
       "Inf=Infinity", "Inf@odata.type=Edm.Double",
       "NInf=-Infinity", "NInf@odata.type=Edm.Double",
       "When=2020-01-02T03:04:05.1234567Z", "When@odata.type=Edm.DateTime",
       "Id=" + GUID, "Id@odata.type=Edm.Guid",
       "Bytes=AQID", "Bytes@odata.type=Edm.Binary",
       "Plain=text")

    e = table.get_entity("p", "r")
    assert e["Flag"] is True and e["Off"] is False
    assert e["I32"] == -42 and type(e["I32"]) is int
    assert e["I64"] == EntityProperty(9007199254740993, EdmType.INT64)
    assert e["D"] == 1.5
    assert math.isnan(e["Nan"])
    assert e["Inf"] == math.inf and e["NInf"] == -math.inf
    assert e["When"] == datetime(2020, 1, 2, 3, 4, 5, 123456, tzinfo=timezone.utc)
    assert e["Id"] == uuid.UUID(GUID)
    # The CLI's storage library base64-encodes the text it is given for Edm.Binary, so the stored
    # bytes are the characters typed.
    assert e["Bytes"] == b"AQID"
    assert e["Plain"] == "text"

    shown = az(az_env, target, "show", "--table-name", tn, "--partition-key", "p", "--row-key", "r")
    assert shown["Flag"] is True and shown["I32"] == -42 and shown["D"] == 1.5
    assert shown["I64"] == {"edm_type": "Edm.Int64", "value": 9007199254740993}
    assert math.isnan(shown["Nan"]) and shown["NInf"] == -math.inf
    assert shown["Id"] == GUID

    found = az(az_env, target, "query", "--table-name", tn,
               "--filter", "I64 eq 9007199254740993L and Flag eq true and Inf gt 1.0",
               "--select", "I32", "When")
    assert [(i["I32"], i["When"][:19]) for i in found["items"]] == [(-42, "2020-01-02T03:04:05")]

    # merge: retypes Flag and adds an Int64, leaving the rest.
    az(az_env, target, "merge", "--table-name", tn, "--entity", "PartitionKey=p", "RowKey=r",
       "Flag=FALSE", "Flag@odata.type=Edm.Boolean", "Extra=-7", "Extra@odata.type=Edm.Int64")
    e = table.get_entity("p", "r")
    assert e["Flag"] is False
    assert e["Extra"] == EntityProperty(-7, EdmType.INT64)
    assert e["I32"] == -42 and e["Id"] == uuid.UUID(GUID)


def test_az_values_the_service_refuses(az_env, target, table):
    # (An Int32 out of range never leaves the CLI: its storage library checks the range itself.)
    tn = table.table_name
    res = az(az_env, target, "insert", "--table-name", tn, "--entity", "PartitionKey=p", "RowKey=bad",
             "Flag=maybe", "Flag@odata.type=Edm.Boolean", check=False)
    assert res.returncode != 0
    assert "ErrorCode:InvalidInput" in res.stderr, res.stderr
    assert list(table.list_entities()) == []
