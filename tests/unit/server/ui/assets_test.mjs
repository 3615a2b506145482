// Unit tests of the data browser's pure modules (server/ui/assets), run by node
// (node --test; the ui stage of scripts/test.sh): Edm conversions both ways,
// the export format's JSON Lines and CSV, the metrics summary, and the signing
// string checked against a signature computed independently with node:crypto.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';

import { fromWire, parseWireJson, toWireEntity, toWireValue, unchangedText } from '../../../../server/ui/assets/edm.js';
import { csvField, exportQuery, toCsv, toJsonLines } from '../../../../server/ui/assets/export.js';
import { rates, summarize } from '../../../../server/ui/assets/metrics.js';
import { emptyGridText, tableCountText } from '../../../../server/ui/assets/grid_text.js';
import { canonicalizedResource, importAccountKey, sharedKeyLite } from '../../../../server/ui/assets/signing.js';

test('wire entity: types from annotations and from number text', () => {
  const wire = parseWireJson(
    '{"odata.etag":"W/\\"x\\"","PartitionKey":"p","RowKey":"r","Timestamp":"2024-01-01T00:00:00Z",' +
      '"I":6,"D":6.0,"E":1e300,"B":true,"S":"text","L@odata.type":"Edm.Int64","L":"9007199254740993",' +
      '"N@odata.type":"Edm.Double","N":"NaN","T@odata.type":"Edm.DateTime","T":"2024-05-01T12:00:00.5Z"}',
  );
  const e = fromWire(wire);
  assert.equal(e.pk, 'p');
  assert.equal(e.rk, 'r');
  assert.equal(e.etag, 'W/"x"');
  assert.deepEqual(e.props, [
    { name: 'I', type: 'Edm.Int32', text: '6' },
    { name: 'D', type: 'Edm.Double', text: '6.0' },
    { name: 'E', type: 'Edm.Double', text: '1e+300' },
    { name: 'B', type: 'Edm.Boolean', text: 'true' },
    { name: 'S', type: 'Edm.String', text: 'text' },
    { name: 'L', type: 'Edm.Int64', text: '9007199254740993' },
    { name: 'N', type: 'Edm.Double', text: 'NaN' },
    { name: 'T', type: 'Edm.DateTime', text: '2024-05-01T12:00:00.5Z' },
  ]);
});

test('typed values: ranges and shapes are checked before sending', () => {
  assert.equal(toWireValue('a', 'Edm.Int32', '-2147483648'), -2147483648);
  assert.throws(() => toWireValue('a', 'Edm.Int32', '2147483648'), /a: out of the Edm.Int32 range/);
  assert.throws(() => toWireValue('a', 'Edm.Int32', '1.5'), /whole number/);
  assert.equal(toWireValue('a', 'Edm.Int64', '9223372036854775807'), '9223372036854775807');
  assert.throws(() => toWireValue('a', 'Edm.Int64', '9223372036854775808'), /range/);
  assert.equal(toWireValue('a', 'Edm.Double', '6'), 6);
  assert.equal(toWireValue('a', 'Edm.Double', '-Infinity'), '-Infinity');
  assert.throws(() => toWireValue('a', 'Edm.Double', 'six'), /Edm.Double/);
  assert.equal(toWireValue('a', 'Edm.Boolean', 'FALSE'), false);
  assert.throws(() => toWireValue('a', 'Edm.Boolean', 'yes'), /true or false/);
  assert.throws(() => toWireValue('a', 'Edm.DateTime', '2024-05-01'), /UTC/);
  assert.equal(toWireValue('a', 'Edm.Guid', '0F8FAD5B-D9CB-469F-A165-70867728950E'), '0f8fad5b-d9cb-469f-a165-70867728950e');
  assert.throws(() => toWireValue('a', 'Edm.Binary', '***'), /base64/);
});

test('entity body annotates every non-string type and refuses reserved or repeated names', () => {
  const body = toWireEntity('p', 'r', [
    { name: 'S', type: 'Edm.String', text: 'x' },
    { name: 'D', type: 'Edm.Double', text: '6' },
  ]);
  assert.deepEqual(body, { PartitionKey: 'p', RowKey: 'r', S: 'x', 'D@odata.type': 'Edm.Double', D: 6 });
  assert.throws(() => toWireEntity('p', 'r', [{ name: 'Timestamp', type: 'Edm.String', text: '' }]), /reserved/);
  assert.throws(() => toWireEntity('p', 'r', [{ name: '', type: 'Edm.String', text: '' }]), /needs a name/);
  const twice = [{ name: 'A', type: 'Edm.String', text: '' }, { name: 'A', type: 'Edm.Int32', text: '1' }];
  assert.throws(() => toWireEntity('p', 'r', twice), /used twice/);
});

test('JSON Lines follow docs/export-format.md', () => {
  const rows = [
    {
      pk: 'p',
      rk: 'r"1',
      props: [
        { name: 'D', type: 'Edm.Double', text: '6.0' },
        { name: 'N', type: 'Edm.Double', text: 'NaN' },
        { name: 'T', type: 'Edm.DateTime', text: '2024-05-01T12:00:00.5Z' },
        { name: 'L', type: 'Edm.Int64', text: '-5' },
        { name: 'S', type: 'Edm.String', text: 'a\nb' },
      ],
    },
  ];
  assert.equal(
    toJsonLines('acct', 'T1', rows),
    '{"@format":"tablestone-export","@version":1,"@table":"T1","@source":"acct"}\n' +
      '{"PartitionKey":"p","RowKey":"r\\"1","D@odata.type":"Edm.Double","D":6.0,"N@odata.type":"Edm.Double","N":"NaN",' +
      '"T@odata.type":"Edm.DateTime","T":"2024-05-01T12:00:00.5000000Z","L@odata.type":"Edm.Int64","L":"-5","S":"a\\nb"}\n' +
      '{"@end":"T1","@entities":1}\n',
  );
});

test('CSV: union of columns, quoting', () => {
  const rows = [
    { pk: 'p', rk: '1', timestamp: 't', props: [{ name: 'A', type: 'Edm.String', text: 'x,y' }] },
    { pk: 'p', rk: '2', timestamp: 't', props: [{ name: 'B', type: 'Edm.Int32', text: '3' }] },
  ];
  assert.equal(toCsv(rows), 'PartitionKey,RowKey,Timestamp,A,B\r\np,1,t,"x,y",\r\np,2,t,,3\r\n');
});

test('metrics: totals, errors and rates from the exposition', () => {
  const text = (ok, bad, sum) =>
    '# TYPE tablestone_requests_total counter\n' +
    `tablestone_requests_total{account="a",operation="GetEntity",status_class="2xx"} ${ok}\n` +
    `tablestone_requests_total{account="a",operation="GetEntity",status_class="4xx"} ${bad}\n` +
    `tablestone_request_duration_seconds_sum{operation="GetEntity"} ${sum}\n` +
    `tablestone_request_duration_seconds_count{operation="GetEntity"} ${ok + bad}\n` +
    'tablestone_uptime_seconds 12.5\n';
  const first = summarize(text(10, 2, 0.012));
  assert.equal(first.requests, 12);
  assert.equal(first.errors, 2);
  const r = rates(first, summarize(text(30, 2, 0.032)), 2);
  assert.equal(r.requestsPerSecond, 10);
  assert.equal(r.errorsPerSecond, 0);
  assert.ok(Math.abs(r.latencyMs - 1) < 1e-9);
  assert.equal(r.uptime, 12.5);
});

test('Shared Key Lite: the string the server checks, signed with the account key', async () => {
  const key = Buffer.from('a test key').toString('base64');
  const url = new URL("http://127.0.0.1:10002/acct/Tables('x')?comp=acl&$top=5");
  assert.equal(canonicalizedResource('acct', url), "/acct/acct/Tables('x')?comp=acl");
  const date = 'Thu, 26 Nov 2026 12:00:00 GMT';
  const expected = createHmac('sha256', Buffer.from(key, 'base64'))
    .update(`${date}\n/acct/acct/Tables('x')?comp=acl`)
    .digest('base64');
  assert.equal(await sharedKeyLite(await importAccountKey(key), 'acct', url, date), `SharedKeyLite acct:${expected}`);
});

test('number texts survive strings holding digits, quotes and escapes', () => {
  const v = parseWireJson('{"S":"a\\"1, 2\\\\","n":-1.5e3,"a":[0,7.25],"t":true,"z":null}');
  assert.equal(v.S, 'a"1, 2\\');
  assert.deepEqual(v.n, { number: -1500, text: '-1.5e3' });
  assert.deepEqual(v.a, [{ number: 0, text: '0' }, { number: 7.25, text: '7.25' }]);
  assert.equal(v.t, true);
  assert.equal(v.z, null);
});

test('editor: an unedited value is sent back as read, line breaks included (issue 35 item 1)', () => {
  // A textarea reads CR LF and a lone CR back as LF.
  const stored = 'one\r\ntwo\rthree\n\tfour  ';
  assert.equal(unchangedText('one\ntwo\nthree\n\tfour  ', stored), stored);
  assert.equal(unchangedText('one\ntwo', stored), 'one\ntwo');
  assert.equal(unchangedText('new', undefined), 'new');
  const astral = '\u{1F600}'.repeat(16384);
  assert.equal(unchangedText(astral, astral), astral);
});

test('JSON Lines export: a $select gets the keys added, a row without keys is refused (issue 35 item 2)', () => {
  assert.deepEqual(exportQuery({ filter: 'x', select: 'Name, Count', top: '' }),
    { filter: 'x', select: 'PartitionKey,RowKey,Name,Count', top: '' });
  assert.deepEqual(exportQuery({ filter: '', select: 'RowKey,PartitionKey', top: '' }).select, 'RowKey,PartitionKey');
  const all = { filter: '', select: '', top: '5' };
  assert.equal(exportQuery(all), all);
  assert.throws(() => toJsonLines('a', 'T', [{ props: [{ name: 'N', type: 'Edm.Int32', text: '1' }] }]),
    /PartitionKey and RowKey/);
  assert.throws(() => toJsonLines('a', 'T', [{ pk: 'p', props: [] }]), /PartitionKey and RowKey/);
});

test('CSV: formula starts are neutralised, plain numbers kept (issue 30 item 11)', () => {
  for (const bad of ['=1+1', '+SUM(A1)', '-2+3', '@cmd', '\t=x', '\r=x', '=HYPERLINK("http://x")', '-', '+']) {
    const field = csvField(bad);
    assert.ok(field.startsWith('"\''), `${JSON.stringify(bad)} -> ${field}`);
    assert.equal(field.slice(2, -1).replaceAll('""', '"'), bad);
  }
  for (const plain of ['-5', '+1.5e3', '-0.25', '6', 'a=b', 'x-y', '']) assert.equal(csvField(plain), plain);
  const rows = [{ pk: '=p', rk: '1', timestamp: 't', props: [{ name: '@N', type: 'Edm.Int32', text: '-7' }] }];
  assert.equal(toCsv(rows), 'PartitionKey,RowKey,Timestamp,"\'@N"\r\n"\'=p",1,t,-7\r\n');
});

test('metrics: entities are the exact per-account counts, not the storage estimate (issue 35 item 5)', () => {
  const s = summarize(
    'tablestone_storage_estimated_entities 2\n' +
      'tablestone_entities{account="devstoreaccount1"} 202654\n' +
      'tablestone_entities{account="second"} 2\n' +
      'tablestone_entity_counts_complete 1\n',
  );
  assert.equal(s.entities, 202656);
  assert.equal(rates(null, s, 0).entities, 202656);
});

test('grid sentences: table counts in words, and an empty page says why (issue 35)', () => {
  assert.equal(tableCountText(0, false, 'a'), '0 tables in account a.');
  assert.equal(tableCountText(1, false, 'a'), '1 table in account a.');
  assert.equal(tableCountText(1000, true, 'a'), '1000 tables shown (more on the server) in account a.');
  const at = (over) => emptyGridText({ table: 'T', filter: '', page: 0, more: false, ...over });
  assert.match(at({}), /^No entities: table T is empty\. Add one with New entity/);
  assert.equal(at({ filter: "N eq 1" }), "No entities match $filter N eq 1. Change or clear the filter and run the query again.");
  // An empty page with a continuation is not the end, filtered or not, first page or not.
  for (const over of [{ more: true }, { more: true, filter: 'N eq 1' }, { more: true, page: 3 }]) {
    assert.equal(at(over), 'No entities on this page; the query goes on: use Next.', JSON.stringify(over));
  }
  assert.equal(at({ page: 2 }), 'No more entities: this is the end of the query.');
  assert.equal(at({ page: 2, filter: 'N eq 1' }), 'No more entities: this is the end of the query.');
});
