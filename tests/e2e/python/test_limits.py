"""Limits, both sides of each (spec 3.2-3.4): property count, name length, string/binary size, entity
size, key length and characters; and that nothing is stored when a write is rejected."""

import base64
import json
import urllib.parse

import pytest

from harness import NOMETA

EMOJI = "\U0001F600"  # one character, two UTF-16 code units


def _insert_json(raw, table, entity, ensure_ascii=False):
    body = json.dumps(entity, ensure_ascii=ensure_ascii).encode("utf-8")
    return raw.request("POST", "/" + table, body=body, content_type="application/json", accept=NOMETA)


def _count(raw, table):
    r = raw.query(table, accept=NOMETA)
    assert r.status == 200, r
    return len(r.json()["value"])


def _assert_rejected(raw, table, r, status=400, code=None):
    assert r.status == status, r
    if code is not None:
        assert r.error_code == code, r
        assert r.header("x-ms-error-code") == code
    assert _count(raw, table) == 0  # nothing stored


def _props(n, value=1):
    return {"p%03d" % i: value for i in range(n)}


def test_255_properties_including_system_ones(raw, table):
    ok = {"PartitionKey": "p", "RowKey": "ok", **_props(252)}  # + PartitionKey, RowKey, Timestamp = 255
    r = _insert_json(raw, table.table_name, ok)
    assert r.status == 201, r
    body = raw.get_entity(table.table_name, "p", "ok", accept=NOMETA).json()
    assert len(body) == 255


@pytest.mark.azurite_wrong("does not limit the number of properties (spec 3.4)")
def test_too_many_properties_rejected(raw, table):
    r = _insert_json(raw, table.table_name, {"PartitionKey": "p", "RowKey": "bad", **_props(253)})
    _assert_rejected(raw, table.table_name, r, code="TooManyProperties")


def test_property_name_255_chars_accepted(raw, table):
    name = "N" * 255
    r = _insert_json(raw, table.table_name, {"PartitionKey": "p", "RowKey": "n", name: "v"})
    assert r.status == 201, r
    assert raw.get_entity(table.table_name, "p", "n", accept=NOMETA).json()[name] == "v"


@pytest.mark.azurite_wrong("does not limit property name length (spec 3.2)")
def test_property_name_256_chars_rejected(raw, table):
    r = _insert_json(raw, table.table_name, {"PartitionKey": "p", "RowKey": "n", "N" * 256: "v"})
    _assert_rejected(raw, table.table_name, r, code="PropertyNameTooLong")


@pytest.mark.azurite_wrong("barely validates property names (spec 3.2)")
@pytest.mark.parametrize("name", ["has space", "1digit", "with-dash", "at@sign", ""])
def test_invalid_property_names_rejected(raw, table, name):
    r = _insert_json(raw, table.table_name, {"PartitionKey": "p", "RowKey": "n", name: "v"})
    _assert_rejected(raw, table.table_name, r)


AZ_UTF8 = pytest.mark.azurite_wrong("measures strings in UTF-8 bytes, not UTF-16 units (spec 3.4, 12)")


@pytest.mark.parametrize("value", ["x" * 32768,
                                   pytest.param(EMOJI * 16384, marks=AZ_UTF8),
                                   pytest.param("é" * 32768, marks=AZ_UTF8)],
                         ids=["ascii", "surrogate-pairs", "two-byte-utf8"])
def test_string_32768_utf16_units_accepted(raw, table, value):
    r = _insert_json(raw, table.table_name, {"PartitionKey": "p", "RowKey": "s", "v": value})
    assert r.status == 201, r
    assert raw.get_entity(table.table_name, "p", "s", accept=NOMETA).json()["v"] == value


@pytest.mark.parametrize("value", ["x" * 32769, "é" * 32769],
                         ids=["ascii", "two-byte-utf8"])
def test_string_32769_units_rejected(raw, table, value):
    r = _insert_json(raw, table.table_name, {"PartitionKey": "p", "RowKey": "s", "v": value})
    _assert_rejected(raw, table.table_name, r, code="PropertyValueTooLarge")


@pytest.mark.azurite_wrong("counts characters (JS length of code points) differently from UTF-16 units "
                           "for surrogate pairs (spec 3.4, 12)")
@pytest.mark.parametrize("value", [EMOJI * 16384 + "x", EMOJI * 16385], ids=["pairs+1", "pairs+2"])
def test_string_over_limit_with_surrogate_pairs_rejected(raw, table, value):
    r = _insert_json(raw, table.table_name, {"PartitionKey": "p", "RowKey": "s", "v": value})
    _assert_rejected(raw, table.table_name, r, code="PropertyValueTooLarge")


def test_binary_65536_accepted_65537_rejected(raw, table):
    ok = base64.b64encode(b"\xab" * 65536).decode()
    r = _insert_json(raw, table.table_name, {"PartitionKey": "p", "RowKey": "b",
                                             "v@odata.type": "Edm.Binary", "v": ok})
    assert r.status == 201, r
    raw.request("DELETE", raw.entity_path(table.table_name, "p", "b"), headers={"If-Match": "*"})
    bad = base64.b64encode(b"\xab" * 65537).decode()
    r = _insert_json(raw, table.table_name, {"PartitionKey": "p", "RowKey": "b",
                                             "v@odata.type": "Edm.Binary", "v": bad})
    _assert_rejected(raw, table.table_name, r, code="PropertyValueTooLarge")


def test_entity_just_under_1mib_accepted(raw, table):
    # 15 strings of 32768 chars: about 0.94 MiB by the service's UTF-16 size formula.
    ent = {"PartitionKey": "p", "RowKey": "big", **{"s%02d" % i: "y" * 32768 for i in range(15)}}
    r = _insert_json(raw, table.table_name, ent)
    assert r.status == 201, r
    body = raw.get_entity(table.table_name, "p", "big", accept=NOMETA).json()
    assert len(body["s14"]) == 32768


def _binaries(n):
    b = base64.b64encode(b"z" * 65536).decode()
    ent = {}
    for i in range(n):
        ent["b%02d@odata.type" % i] = "Edm.Binary"
        ent["b%02d" % i] = b
    return ent


@pytest.mark.azurite_wrong("estimates entity size from the request text, not the service's formula "
                           "(spec 3.4)")
@pytest.mark.parametrize("props", [
    {"s%02d" % i: "y" * 32768 for i in range(17)},  # 17 x 64 KiB of UTF-16 = 1.06 MiB
    _binaries(17),                                    # 17 x 64 KiB of bytes
], ids=["utf16-strings", "binaries"])
def test_entity_over_1mib_rejected(raw, table, props):
    r = _insert_json(raw, table.table_name, {"PartitionKey": "p", "RowKey": "big", **props})
    _assert_rejected(raw, table.table_name, r, code="EntityTooLarge")


def test_request_body_over_4mib_is_413(raw, table):
    # Well above 4 MiB: servers may allow some slack over the nominal 4 MiB limit.
    body = b'{"PartitionKey":"p","RowKey":"huge","s":"' + b"q" * (4 * 1024 * 1024 + 300 * 1024) + b'"}'
    r = raw.request("POST", "/" + table.table_name, body=body, content_type="application/json")
    assert r.status == 413, r
    assert _count(raw, table.table_name) == 0


def test_body_just_over_4mib_is_413(raw, table):
    # The case: 128 properties of 32 Ki characters, a body just over 4,194,304 bytes.
    entity = {"PartitionKey": "p", "RowKey": "big"}
    entity.update({"p%03d" % i: "v" * 32768 for i in range(128)})
    body = json.dumps(entity).encode("utf-8")
    assert 4 * 1024 * 1024 < len(body) < 4 * 1024 * 1024 + 64 * 1024
    r = raw.request("POST", "/" + table.table_name, body=body, content_type="application/json")
    _assert_rejected(raw, table.table_name, r, status=413, code="RequestBodyTooLarge")


def test_body_of_exactly_4mib_is_not_refused_for_its_size(raw, table):
    # Padded with JSON whitespace to exactly 4,194,304 bytes: within the cap, and the entity itself is
    # small (its size is counted by the service's formula, not by the JSON length), so it is stored.
    head = b'{"PartitionKey":"p","RowKey":"edge","s":"' + b"q" * 30000 + b'"'
    body = head + b" " * (4 * 1024 * 1024 - len(head) - 1) + b"}"
    assert len(body) == 4 * 1024 * 1024
    r = raw.request("POST", "/" + table.table_name, body=body, content_type="application/json")
    assert r.status == 201, r
    assert _count(raw, table.table_name) == 1


def test_batch_body_just_over_4mib_is_413(raw, table):
    # The 4 MiB applies to the whole $batch body, multipart framing included.
    value = "v" * 32000
    ops = [("POST", "/" + table.table_name,
            {"PartitionKey": "p", "RowKey": "r%03d" % i, **{"s%d" % j: value for j in range(33)}}, None)
           for i in range(4)]  # 4,224,000 bytes of values: over 4 MiB, under the transport's 4 MiB + 64 KiB
    r, _ = raw.batch(ops)
    assert r.status == 413, r
    assert r.error_code == "RequestBodyTooLarge", r
    assert _count(raw, table.table_name) == 0


def test_merge_with_oversized_value_leaves_entity_unchanged(raw, table):
    table.create_entity({"PartitionKey": "p", "RowKey": "m", "v": "old"})
    r = raw.request("PATCH", raw.entity_path(table.table_name, "p", "m"), body={"v": "x" * 32769},
                    headers={"If-Match": "*"})
    assert r.status == 400, r
    assert table.get_entity("p", "m")["v"] == "old"


@pytest.mark.parametrize("length", [1, 255, 512])
def test_key_lengths_accepted(raw, table, length):
    key = "k" * length
    r = _insert_json(raw, table.table_name, {"PartitionKey": key, "RowKey": key})
    assert r.status == 201, r
    assert raw.get_entity(table.table_name, key, key).status == 200
    r = raw.request("PUT", raw.entity_path(table.table_name, key, key + "u"[:0]), body={"x": 1})
    assert r.status == 204, r


def test_key_2048_chars_rejected(raw, table):
    key = "k" * 2048
    r = _insert_json(raw, table.table_name, {"PartitionKey": "p", "RowKey": key})
    _assert_rejected(raw, table.table_name, r)
    r = _insert_json(raw, table.table_name, {"PartitionKey": key, "RowKey": "r"})
    _assert_rejected(raw, table.table_name, r)


@pytest.mark.azurite_wrong("answers InvalidInput instead of PropertyValueTooLarge for long keys "
                           "(spec 3.3, 12)")
def test_key_2048_chars_error_code(raw, table):
    r = _insert_json(raw, table.table_name, {"PartitionKey": "p", "RowKey": "k" * 2048})
    _assert_rejected(raw, table.table_name, r, code="PropertyValueTooLarge")


BAD_KEY_CHARS = ["/", "\\", "#", "?", "\x00", "\x01", "\x1f", "\x7f", "\x80", "\x9f"]


def _cid(c):
    return "U+%04X" % ord(c)


@pytest.mark.parametrize("ch", BAD_KEY_CHARS, ids=_cid)
@pytest.mark.parametrize("which", ["PartitionKey", "RowKey"])
def test_forbidden_key_chars_in_body_rejected(raw, table, ch, which):
    ent = {"PartitionKey": "p", "RowKey": "r"}
    ent[which] = "a%sb" % ch
    r = _insert_json(raw, table.table_name, ent, ensure_ascii=True)
    _assert_rejected(raw, table.table_name, r)


@pytest.mark.azurite_wrong("answers InvalidInput for forbidden key characters (spec 3.3, 12)")
@pytest.mark.parametrize("ch", BAD_KEY_CHARS, ids=_cid)
def test_forbidden_key_chars_in_body_error_code(raw, table, ch):
    r = _insert_json(raw, table.table_name, {"PartitionKey": "p", "RowKey": "a%sb" % ch}, ensure_ascii=True)
    _assert_rejected(raw, table.table_name, r, code="OutOfRangeInput")


@pytest.mark.parametrize("ch", [
    pytest.param(c, marks=pytest.mark.azurite_wrong("answers 500 for %2F in a key (spec 3.3)"))
    if c == "/" else c for c in BAD_KEY_CHARS], ids=_cid)
def test_forbidden_key_chars_in_url_rejected(raw, table, ch):
    key = urllib.parse.quote("a%sb" % ch, safe="")
    for method in ("PUT", "PATCH"):
        r = raw.request(method, "/%s(PartitionKey='p',RowKey='%s')" % (table.table_name, key),
                        body={"x": 1})
        _assert_rejected(raw, table.table_name, r)


AZ_URL = pytest.mark.azurite_wrong("answers InvalidInput (or 500 for %2F) for forbidden key characters "
                                   "in URLs (spec 3.3, 12)")


@pytest.mark.parametrize("ch,code", [pytest.param("#", "OutOfRangeInput", marks=AZ_URL),
                                     pytest.param("?", "OutOfRangeInput", marks=AZ_URL),
                                     pytest.param("/", "InvalidInput", marks=AZ_URL),
                                     ("\\", "InvalidInput")],
                         ids=["hash", "question", "slash", "backslash"])
def test_forbidden_key_chars_in_url_error_codes(raw, table, ch, code):
    key = urllib.parse.quote("a%sb" % ch, safe="")
    r = raw.request("PUT", "/%s(PartitionKey='p',RowKey='%s')" % (table.table_name, key), body={"x": 1})
    _assert_rejected(raw, table.table_name, r, code=code)


@pytest.mark.azurite_wrong("accepts non-string keys (spec 3.2)")
@pytest.mark.parametrize("ent", [
    {"PartitionKey": 1, "RowKey": "r"},
    {"PartitionKey": "p", "RowKey": True},
    {"PartitionKey": "p", "RowKey@odata.type": "Edm.Int64", "RowKey": "5"},
], ids=["int-pk", "bool-rk", "int64-annotated-rk"])
def test_non_string_keys_rejected(raw, table, ent):
    r = _insert_json(raw, table.table_name, ent)
    _assert_rejected(raw, table.table_name, r)


@pytest.mark.azurite_wrong("keeps the last of duplicated JSON properties (spec 3.2)")
def test_duplicate_property_rejected(raw, table):
    body = b'{"PartitionKey":"p","RowKey":"dup","a":1,"a":2}'
    r = raw.request("POST", "/" + table.table_name, body=body, content_type="application/json")
    _assert_rejected(raw, table.table_name, r, code="DuplicatePropertiesSpecified")


def test_malformed_json_rejected(raw, table):
    for body in (b'{"PartitionKey":"p","RowKey":', b"[]", b"not json"):
        r = raw.request("POST", "/" + table.table_name, body=body, content_type="application/json")
        _assert_rejected(raw, table.table_name, r)
