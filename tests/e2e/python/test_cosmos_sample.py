"""The sample programs of docs/cosmos-mode.md, run as a user would run them (issue 38).

The code blocks are read from the page itself (each follows an HTML comment naming it), so the
documentation cannot drift from what is tested. One server serves both flavours: its main listener
is the storage flavour (devstoreaccount1), its --cosmosPort listener the Cosmos DB flavour in the
shape of the Windows emulator's Table endpoint (account `localhost`, http://localhost:<port>/).

"assumes-key-order" must pass against storage and fail visibly (exit 1, its own message) against
Cosmos, as it does against the two real services; "sorts-itself", the fix, must pass against both.
"""

import os
import re
import subprocess
import sys

import pytest

import harness

DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "docs", "cosmos-mode.md")
# The Cosmos DB emulator's published account and key (docs/cosmos-mode.md, "Switching it on").
EMULATOR_ACCOUNT = "localhost"
EMULATOR_KEY = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="
# Debian's interpreter has azure.data.tables (scripts/test.sh runs pytest with it, too).
PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable


def sample(name):
    with open(DOC, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"<!-- sample:%s -->\s*```python\n(.*?)```" % re.escape(name), text, re.S)
    assert m, "docs/cosmos-mode.md has no block marked sample:%s" % name
    return m.group(1)


@pytest.fixture(scope="module")
def both(target):
    cosmos_port = harness.free_port()
    gen = harness.own_server(target, "tablestone-e2e-cosmos-sample.",
                             extra_args=["--cosmosPort", str(cosmos_port)])
    server = next(gen)
    yield {
        "storage": "DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;"
                   "TableEndpoint=http://127.0.0.1:%d/%s;" % (harness.ACCOUNT, harness.ACCOUNT_KEY,
                                                             server.port, harness.ACCOUNT),
        "cosmos": "DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;"
                  "TableEndpoint=http://localhost:%d/;" % (EMULATOR_ACCOUNT, EMULATOR_KEY, cosmos_port),
    }
    with pytest.raises(StopIteration):
        next(gen)


def run(code, connection_string):
    env = dict(os.environ, TABLES_CONNECTION_STRING=connection_string)
    return subprocess.run([PYTHON, "-c", code], env=env, capture_output=True, text=True, timeout=120)


def test_key_order_sample_passes_on_storage(both):
    r = run(sample("assumes-key-order"), both["storage"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "newest five: [20, 19, 18, 17, 16]" in r.stdout


def test_key_order_sample_fails_visibly_on_cosmos(both):
    r = run(sample("assumes-key-order"), both["cosmos"])
    assert r.returncode == 1, r.stdout + r.stderr
    assert "wrong: this code assumed results come back in RowKey order" in r.stderr
    # It got five readings of the partition, just not the newest five in order.
    m = re.search(r"newest five: \[([0-9, ]*)\]", r.stdout)
    assert m, r.stdout
    got = [int(x) for x in m.group(1).split(",")]
    assert len(got) == 5 and set(got) <= set(range(1, 21)) and got != [20, 19, 18, 17, 16]
    # Same seed, same data: the same wrong answer again (a failing test fails again).
    again = run(sample("assumes-key-order"), both["cosmos"])
    assert (again.returncode, again.stdout) == (1, r.stdout)


@pytest.mark.parametrize("flavour", ["storage", "cosmos"])
def test_the_fix_passes_on_both(both, flavour):
    r = run(sample("sorts-itself"), both[flavour])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "newest five: [20, 19, 18, 17, 16]" in r.stdout
