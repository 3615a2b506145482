// Export of a query's whole result, following continuation: JSON Lines in the
// tablestone export format (docs/export-format.md, version 1) or CSV.

import { fromWire } from './edm.js';

// Every entity of the query, page by page; `progress(count)` after each page.
export async function collect(client, table, query, progress) {
  const rows = [];
  let token = null;
  do {
    const page = await client.queryEntities(table, query, token);
    for (const e of page.entities) rows.push(fromWire(e));
    token = page.next;
    progress(rows.length);
  } while (token !== null);
  return rows;
}

// DateTime with exactly 7 fraction digits, as the format requires.
function sevenDigits(text) {
  const m = /^(.*T\d{2}:\d{2}:\d{2})(?:\.(\d{1,7}))?Z$/.exec(text);
  return m ? `${m[1]}.${(m[2] ?? '').padEnd(7, '0')}Z` : text;
}

function jsonValue(type, text) {
  switch (type) {
    case 'Edm.Int32': return text;
    case 'Edm.Boolean': return text;
    case 'Edm.Double':
      return text === 'NaN' || text === 'Infinity' || text === '-Infinity' ? JSON.stringify(text) : text;
    case 'Edm.DateTime': return JSON.stringify(sevenDigits(text));
    case 'Edm.Guid': return JSON.stringify(text.toLowerCase());
    default: return JSON.stringify(text);
  }
}

// The query an export file is read with: a $select gets PartitionKey and
// RowKey added when it leaves them out (an entity line needs both keys).
export function exportQuery(query) {
  const names = (query.select ?? '').split(',').map((n) => n.trim()).filter((n) => n !== '');
  if (names.length === 0) return query;
  for (const key of ['RowKey', 'PartitionKey']) if (!names.includes(key)) names.unshift(key);
  return { ...query, select: names.join(',') };
}

// Throws when a row lacks a key: a line with an invented "" key would import
// as a different entity.
export function toJsonLines(account, table, rows) {
  const lines = [JSON.stringify({ '@format': 'tablestone-export', '@version': 1, '@table': table, '@source': account })];
  for (const row of rows) {
    if (row.pk === undefined || row.rk === undefined) {
      throw new Error('Every exported entity needs its PartitionKey and RowKey; add them to $select.');
    }
    let line = `{"PartitionKey":${JSON.stringify(row.pk)},"RowKey":${JSON.stringify(row.rk)}`;
    for (const p of row.props) {
      const name = JSON.stringify(p.name);
      if (p.type !== 'Edm.String') line += `,${JSON.stringify(`${p.name}@odata.type`)}:${JSON.stringify(p.type)}`;
      line += `,${name}:${jsonValue(p.type, p.text)}`;
    }
    lines.push(`${line}}`);
  }
  lines.push(JSON.stringify({ '@end': table, '@entities': rows.length }));
  return `${lines.join('\n')}\n`;
}

// A spreadsheet runs a cell that begins with = + - @ (or a tab or CR before
// one) as a formula. As OWASP's "CSV Injection" page recommends, such a cell
// gets a leading ' and is quoted; a plain number (-5, +1.5e3) is not a
// formula and stays as it is. docs/ui.md, "Export".
const kFormulaStart = /^[=+\-@\t\r]/;
const kPlainNumber = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

export function csvField(text) {
  if (kFormulaStart.test(text) && !kPlainNumber.test(text)) return `"'${text.replaceAll('"', '""')}"`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

// Columns: PartitionKey, RowKey, Timestamp, then every property name in order
// of first appearance; a cell is the value as the page shows it.
export function toCsv(rows) {
  const names = [];
  const known = new Set();
  for (const row of rows) {
    for (const p of row.props) {
      if (!known.has(p.name)) {
        known.add(p.name);
        names.push(p.name);
      }
    }
  }
  const out = [['PartitionKey', 'RowKey', 'Timestamp', ...names].map(csvField).join(',')];
  for (const row of rows) {
    const byName = new Map(row.props.map((p) => [p.name, p.text]));
    out.push([row.pk ?? '', row.rk ?? '', row.timestamp ?? '', ...names.map((n) => byName.get(n) ?? '')].map(csvField).join(','));
  }
  return `${out.join('\r\n')}\r\n`;
}

export function download(fileName, type, text) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}
