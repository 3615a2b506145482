"""pytest fixtures for the tablestone end-to-end suite (see harness.py for the target rules).

Fixtures:
  target   session-wide Target (managed tablestone or external endpoint)
  service  azure.data.tables.TableServiceClient for the target
  raw      RawClient sending SharedKey-signed raw HTTP requests
  table_name  a unique, not yet created table name (deleted at teardown if it exists)
  table    a created TableClient on a unique table (deleted at teardown)
  restart  callable restarting the managed server on the same data dir (skips on external targets)
  cosmos   session-wide harness.CosmosEndpoint: a tablestone of its own with a Cosmos DB for Table
           listener (--cosmosPort), for the test_cosmos_*.py files (skips on external targets)

Markers:
  @pytest.mark.azurite_wrong("why")  Azurite is known to deviate from the real service here
                                      (spec section 12); skipped only when TABLESTONE_E2E_TARGET=azurite.
"""

import itertools
import os
import sys
import uuid

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from azure.data.tables import TableServiceClient  # noqa: E402

import harness  # noqa: E402

_counter = itertools.count()


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "azurite_wrong(reason): behaviour Azurite gets wrong; skipped against Azurite")


def pytest_collection_modifyitems(config, items):
    if harness.TARGET_KIND != "azurite":
        return
    for item in items:
        marker = item.get_closest_marker("azurite_wrong")
        if marker is not None:
            reason = marker.args[0] if marker.args else "Azurite deviates from the service"
            item.add_marker(pytest.mark.skip(reason="Azurite deviation: " + reason))


@pytest.fixture(scope="session")
def target():
    t = harness.Target()
    yield t
    code = t.close()
    if t.managed:
        assert code == 0, "tablestone did not exit with 0 on SIGTERM (got %r)" % (code,)


@pytest.fixture(scope="session")
def cosmos(target):
    yield from harness.cosmos_server(target, "tablestone-e2e-cosmos.")


@pytest.fixture(scope="session")
def service(target):
    return TableServiceClient.from_connection_string(target.connection_string)


@pytest.fixture(scope="session")
def raw(target):
    return harness.RawClient(target)


def unique_name(prefix="t"):
    return "%s%s%d" % (prefix, uuid.uuid4().hex[:10], next(_counter))


@pytest.fixture
def table_name(service):
    name = unique_name()
    yield name
    try:
        service.delete_table(name)
    except Exception:  # noqa: BLE001 - best effort cleanup
        pass


@pytest.fixture
def table(service, table_name):
    return service.create_table(table_name)


@pytest.fixture
def restart(target):
    if not target.managed:
        pytest.skip("restart needs a tablestone process started by the harness")
    return target.restart


def sdk_error_code(exc):
    """The service error code of an azure-core exception raised by azure.data.tables.

    Newer SDK releases decode it into exc.error_code on every path; older ones (Debian's 12.4)
    re-raise some errors undecoded, so fall back to the x-ms-error-code header, then the body."""
    code = getattr(exc, "error_code", None)
    if code is not None:
        return str(getattr(code, "value", code))
    response = getattr(exc, "response", None)
    if response is None:
        return None
    code = response.headers.get("x-ms-error-code")
    if code:
        return code
    try:
        return response.json()["odata.error"]["code"]
    except Exception:  # noqa: BLE001 - not a JSON error body
        return None


def entity_props(entity):
    """dict(entity) with PartitionKey/RowKey restored: azure-data-tables 12.4 drops empty keys."""
    d = dict(entity)
    d.setdefault("PartitionKey", "")
    d.setdefault("RowKey", "")
    return d
