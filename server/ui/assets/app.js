// The data browser (docs/ui.md): one page of one table at a time. All data
// access is Table API requests signed in this page with the account key,
// which is kept in sessionStorage (this tab only) and nowhere else.

import { cryptoAvailable, importAccountKey } from './signing.js';
import { TableClient, TableError } from './table_client.js';
import { fromWire, kTypes, toWireEntity, unchangedText } from './edm.js';
import { collect, download, exportQuery, toCsv, toJsonLines } from './export.js';
import { MetricsPoller } from './metrics.js';
import { emptyGridText, tableCountText } from './grid_text.js';

// The development account's key is published by Microsoft (Learn:
// azurite#well-known-storage-account-and-key); the server says when it may be
// used without asking (config.json "devKey": loopback only).
const kDevAccount = 'devstoreaccount1';
const kDevKey = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

const $ = (id) => document.getElementById(id);

const state = {
  config: null,
  client: null,
  table: null,
  query: { filter: '', select: '', top: '' },
  tokens: [null], // tokens[i] loads page i; null = the first page
  page: 0,
  next: null,
  rows: [],
  failed: false, // the last page load was refused (the alert says why)
  editing: null, // {row (null = new), etag, opener}
};

function showError(error, where = $('error')) {
  const text = error instanceof TableError ? error.describe() : String(error?.message ?? error);
  where.textContent = text;
  where.hidden = false;
}

function clearError(where = $('error')) {
  where.hidden = true;
  where.textContent = '';
}

function say(text) {
  $('status').textContent = text;
}

// Runs `work` with errors shown in the page's alert region.
async function guarded(work, where) {
  clearError(where);
  try {
    return await work();
  } catch (e) {
    showError(e, where);
    return undefined;
  }
}

// ---- accounts and keys ----------------------------------------------------

function keyStorageName(account) {
  return `tablestone.key.${account}`;
}

async function useAccount(account) {
  state.client = null;
  state.table = null;
  renderTableSelection();
  $('tables').replaceChildren();
  let key = sessionStorage.getItem(keyStorageName(account));
  if (key === null && account === kDevAccount && state.config.devKey) key = kDevKey;
  if (key === null) return askKey(account, `Paste the key of account ${account} to browse it.`);
  try {
    state.client = new TableClient(account, await importAccountKey(key));
  } catch {
    return askKey(account, 'That key is not valid base64.');
  }
  $('key-form').hidden = true;
  await loadTables();
}

function askKey(account, why) {
  $('key-why').textContent = why;
  $('key-form').hidden = false;
  $('key').value = '';
  $('key').focus();
}

async function onKeySubmit(event) {
  event.preventDefault();
  const account = $('account').value;
  sessionStorage.setItem(keyStorageName(account), $('key').value.trim());
  await useAccount(account);
}

// ---- tables ---------------------------------------------------------------

let tablesNext = null;

async function loadTables(more = false) {
  if (!more) {
    $('tables').replaceChildren();
    tablesNext = null;
  }
  const ok = await guarded(async () => {
    const page = await state.client.listTables(tablesNext);
    tablesNext = page.next;
    for (const name of page.names) {
      const li = document.createElement('li');
      const button = document.createElement('button');
      button.type = 'button';
      button.textContent = name;
      button.dataset.table = name;
      button.addEventListener('click', () => openTable(name));
      li.append(button);
      $('tables').append(li);
    }
    return true;
  });
  $('more-tables').hidden = !tablesNext;
  if (ok) say(tableCountText($('tables').children.length, Boolean(tablesNext), state.client.account));
  if (ok && $('tables').children.length === 0) $('new-table').focus();
  // The key was refused: ask for another one.
  if (!ok && !$('error').hidden && $('error').textContent.startsWith('403')) {
    sessionStorage.removeItem(keyStorageName(state.client.account));
    askKey(state.client.account, 'The server refused that key. Paste the account key.');
  }
  renderTableSelection();
}

function renderTableSelection() {
  for (const b of $('tables').querySelectorAll('button')) {
    b.setAttribute('aria-current', String(b.dataset.table === state.table));
  }
  $('entities-view').hidden = state.table === null;
  $('pick-table').hidden = state.table !== null;
}

async function onCreateTable(event) {
  event.preventDefault();
  const name = $('new-table').value.trim();
  await guarded(async () => {
    await state.client.createTable(name);
    $('new-table').value = '';
    say(`Table ${name} created.`);
    await loadTables();
    await openTable(name);
  });
}

async function onDeleteTable() {
  const name = state.table;
  if (!confirm(`Delete table ${name} and every entity in it?`)) return;
  await guarded(async () => {
    await state.client.deleteTable(name);
    state.table = null;
    say(`Table ${name} deleted.`);
    await loadTables();
    $('new-table').focus();
  });
}

// ---- entities -------------------------------------------------------------

// A cell shows at most this many characters (three lines of the widest
// column); longer values get a button that shows the rest (a 2,000-character
// value made a row taller than the window).
const kCellChars = 120;

function valueCell(td, text) {
  if (text.length <= kCellChars) {
    td.append(text);
    return;
  }
  const shown = document.createElement('span');
  shown.className = 'cell-text';
  shown.textContent = `${text.slice(0, kCellChars)}…`;
  const more = document.createElement('button');
  more.type = 'button';
  more.className = 'more';
  more.textContent = `all ${text.length.toLocaleString('en')} characters`;
  more.setAttribute('aria-expanded', 'false');
  more.addEventListener('click', () => {
    const open = more.getAttribute('aria-expanded') === 'true';
    shown.textContent = open ? `${text.slice(0, kCellChars)}…` : text;
    more.textContent = open ? `all ${text.length.toLocaleString('en')} characters` : 'less';
    more.setAttribute('aria-expanded', String(!open));
  });
  td.append(shown, ' ', more);
}

// Each table and each page starts at its top-left corner.
function scrollToStart() {
  const wrap = document.querySelector('.grid-wrap');
  wrap.scrollTop = 0;
  wrap.scrollLeft = 0;
}

async function openTable(name) {
  state.table = name;
  $('table-heading').textContent = name;
  $('filter').value = '';
  $('select').value = '';
  $('top').value = '';
  state.query = { filter: '', select: '', top: '' };
  renderTableSelection();
  await loadPage(0, [null], { fromTop: true });
  $('filter').focus();
}

// Loads page `page` of the current query. fromTop: scroll the grid back to
// its start (another table, page or query); a reload after a save keeps it.
async function loadPage(page, tokens, { fromTop = false } = {}) {
  const ok = await guarded(async () => {
    const result = await state.client.queryEntities(state.table, state.query, tokens[page]);
    state.tokens = tokens;
    state.page = page;
    state.next = result.next;
    state.rows = result.entities.map(fromWire);
    return true;
  });
  state.failed = !ok;
  if (!ok) {
    // The alert says why; the grid shows nothing rather than a stale page.
    state.tokens = tokens;
    state.page = page;
    state.rows = [];
    state.next = null;
  }
  renderGrid();
  if (fromTop) scrollToStart();
}

function renderGrid() {
  const names = [];
  const seen = new Set();
  for (const row of state.rows) {
    for (const p of row.props) {
      if (!seen.has(p.name)) {
        seen.add(p.name);
        names.push(p.name);
      }
    }
  }
  const head = document.createElement('tr');
  for (const n of ['PartitionKey', 'RowKey', 'Timestamp', ...names]) {
    const th = document.createElement('th');
    th.scope = 'col';
    th.textContent = n;
    // The keys stay in view while a wide table scrolls sideways.
    const column = head.children.length;
    if (column < 2) th.className = column === 0 ? 'pk' : 'rk';
    head.append(th);
  }
  $('grid').tHead.replaceChildren(head);
  const body = document.createDocumentFragment();
  state.rows.forEach((row, index) => {
    const tr = document.createElement('tr');
    // The keys are one line each, cut with an ellipsis by the style sheet;
    // the whole key is in the tooltip and in the editor.
    const pk = document.createElement('td');
    pk.className = 'pk';
    pk.textContent = row.pk ?? '';
    pk.title = row.pk ?? '';
    const rk = document.createElement('th');
    rk.className = 'rk';
    rk.scope = 'row';
    const open = document.createElement('button');
    open.type = 'button';
    const rkText = row.rk ?? '(no RowKey)';
    open.textContent = rkText.length > kCellChars ? `${rkText.slice(0, kCellChars)}…` : rkText;
    open.title = rkText;
    open.setAttribute('aria-label', `Open entity ${row.pk} / ${row.rk}`);
    open.addEventListener('click', () => openEditor(index, open));
    rk.append(open);
    const ts = document.createElement('td');
    ts.textContent = row.timestamp ?? '';
    tr.append(pk, rk, ts);
    const byName = new Map(row.props.map((p) => [p.name, p]));
    for (const n of names) {
      const td = document.createElement('td');
      const p = byName.get(n);
      if (p) {
        valueCell(td, p.text);
        // Strings are the common case: only the other types carry a badge.
        if (p.type !== 'Edm.String') {
          const type = document.createElement('span');
          type.className = 'type';
          type.textContent = p.type.slice(4);
          type.title = p.type;
          td.append(type);
        }
      }
      tr.append(td);
    }
    body.append(tr);
  });
  $('grid').tBodies[0].replaceChildren(body);
  // An empty page says so (an empty table showed only its headers).
  const empty = !state.failed && state.rows.length === 0;
  $('grid-empty').hidden = !empty;
  if (empty) {
    $('grid-empty').textContent = emptyGridText({
      table: state.table, filter: state.query.filter, page: state.page, more: state.next !== null,
    });
  }
  const info = state.failed
    ? `Page ${state.page + 1} · the query failed`
    : `Page ${state.page + 1} · ${state.rows.length} entities${state.next ? ' · more' : ''}`;
  $('page-info').textContent = info;
  $('grid-caption').textContent = `${state.table}, ${info}`;
  $('first').disabled = state.page === 0;
  $('prev').disabled = state.page === 0;
  $('next').disabled = state.next === null;
}

async function onQuery(event) {
  event.preventDefault();
  state.query = { filter: $('filter').value.trim(), select: $('select').value.trim(), top: $('top').value.trim() };
  await loadPage(0, [null], { fromTop: true });
}

function goNext() {
  if (state.next === null) return;
  const tokens = state.tokens.slice(0, state.page + 1);
  tokens.push(state.next);
  return loadPage(state.page + 1, tokens, { fromTop: true });
}

// ---- the entity editor ----------------------------------------------------

function propRow(p, index) {
  const div = document.createElement('div');
  div.className = 'prop';
  const name = document.createElement('input');
  name.value = p.name;
  name.className = 'prop-name';
  name.setAttribute('aria-label', `Property ${index + 1} name`);
  const type = document.createElement('select');
  type.className = 'prop-type';
  type.setAttribute('aria-label', `Property ${index + 1} type`);
  for (const t of kTypes) type.add(new Option(t, t, false, t === p.type));
  // A textarea: an <input> drops line breaks. Its value turns CR LF and a
  // lone CR into LF, so the text as read is kept and sent back unless edited
  // (editorProps).
  const value = document.createElement('textarea');
  value.value = p.text;
  value.stored = p.text;
  value.rows = 1;
  value.className = 'prop-value';
  value.spellcheck = false;
  value.setAttribute('aria-label', `Property ${index + 1} value`);
  const remove = document.createElement('button');
  remove.type = 'button';
  remove.textContent = 'Remove';
  remove.setAttribute('aria-label', `Remove property ${index + 1}`);
  remove.addEventListener('click', () => {
    const next = div.nextElementSibling ?? div.previousElementSibling;
    div.remove();
    (next?.querySelector('input') ?? $('add-prop')).focus();
  });
  div.append(name, type, value, remove);
  return div;
}

function fillEditor(row, etag) {
  $('pk').value = row?.pk ?? '';
  $('rk').value = row?.rk ?? '';
  $('pk').readOnly = row !== null;
  $('rk').readOnly = row !== null;
  $('keys-fixed').hidden = row === null;
  $('editor-heading').textContent = row ? 'Edit entity' : 'New entity';
  $('editor-meta').textContent = row ? `ETag ${etag} · Timestamp ${row.timestamp}` : '';
  $('props').replaceChildren(...(row?.props ?? []).map(propRow));
  $('delete-entity').hidden = row === null;
  $('editor-reload').hidden = true;
  clearError($('editor-error'));
}

// Opens the editor on a new entity (index null) or on the stored entity
// behind grid row `index`: read again whole, so a $select'ed page never
// saves a partial entity, and its ETag is the newest.
async function openEditor(index, opener) {
  let row = null;
  if (index !== null) {
    const shown = state.rows[index];
    if (shown.pk === undefined || shown.rk === undefined) {
      return showError(new Error('Include PartitionKey and RowKey in $select to open an entity.'));
    }
    row = await guarded(async () => fromWire(await state.client.getEntity(state.table, shown.pk, shown.rk)));
    if (row === undefined) return;
  }
  state.editing = { row, etag: row?.etag ?? null, opener };
  fillEditor(row, row?.etag);
  $('editor').showModal();
  (row ? $('props').querySelector('.prop-value') ?? $('add-prop') : $('pk')).focus();
}

function editorProps() {
  return [...$('props').querySelectorAll('.prop')].map((div) => {
    const value = div.querySelector('.prop-value');
    return {
      name: div.querySelector('.prop-name').value.trim(),
      type: div.querySelector('.prop-type').value,
      text: unchangedText(value.value, value.stored),
    };
  });
}

function closeEditor() {
  $('editor').close();
  state.editing?.opener?.focus();
  state.editing = null;
}

async function onSave(event) {
  event.preventDefault();
  const where = $('editor-error');
  clearError(where);
  let body;
  try {
    body = toWireEntity($('pk').value, $('rk').value, editorProps());
  } catch (e) {
    return showError(e, where);
  }
  const { row, etag } = state.editing;
  if (row === null && body.PartitionKey === '' && body.RowKey === '' &&
      !confirm('PartitionKey and RowKey are both empty. Insert an entity with empty keys?')) {
    $('pk').focus();
    return;
  }
  try {
    if (row === null) await state.client.insertEntity(state.table, body);
    else await state.client.updateEntity(state.table, body, etag);
  } catch (e) {
    showError(e, where);
    if (e instanceof TableError && e.status === 412) {
      where.textContent += '\nSomeone changed or deleted this entity after you opened it. Reload it to see the stored version.';
      $('editor-reload').hidden = false;
      $('editor-reload').focus();
    }
    return;
  }
  say(row === null ? `Entity ${body.PartitionKey} / ${body.RowKey} inserted.` : `Entity ${body.PartitionKey} / ${body.RowKey} saved.`);
  closeEditor();
  await loadPage(state.page, state.tokens);
}

async function onReload() {
  const where = $('editor-error');
  const { row } = state.editing;
  try {
    const fresh = fromWire(await state.client.getEntity(state.table, row.pk, row.rk));
    state.editing.row = fresh;
    state.editing.etag = fresh.etag;
    fillEditor(fresh, fresh.etag);
    say('Reloaded the stored entity.');
    $('props').querySelector('.prop-value')?.focus();
  } catch (e) {
    showError(e, where);
  }
}

async function onDeleteEntity() {
  const { row, etag } = state.editing;
  if (!confirm(`Delete entity ${row.pk} / ${row.rk}?`)) return;
  try {
    await state.client.deleteEntity(state.table, row.pk, row.rk, etag);
  } catch (e) {
    showError(e, $('editor-error'));
    if (e instanceof TableError && e.status === 412) $('editor-reload').hidden = false;
    return;
  }
  say(`Entity ${row.pk} / ${row.rk} deleted.`);
  closeEditor();
  await loadPage(state.page, state.tokens);
}

// ---- export ---------------------------------------------------------------

async function onExport(kind) {
  await guarded(async () => {
    // JSON Lines needs the keys of every entity: a $select without them gets them added.
    const query = kind === 'jsonl' ? exportQuery(state.query) : state.query;
    const rows = await collect(state.client, state.table, query, (n) => say(`Exporting: ${n} entities read…`));
    if (kind === 'jsonl') download(`${state.table}.jsonl`, 'application/x-ndjson', toJsonLines(state.client.account, state.table, rows));
    else download(`${state.table}.csv`, 'text/csv', toCsv(rows));
    say(`Exported ${rows.length} entities.`);
  });
}

// ---- metrics --------------------------------------------------------------

function renderMetrics(m) {
  const fmt = (v, digits = 1) => (v === null ? '–' : v.toFixed(digits));
  const rows = [
    ['Requests/s', fmt(m.requestsPerSecond)],
    ['Mean latency (ms)', fmt(m.latencyMs, 2)],
    ['Errors/s', fmt(m.errorsPerSecond)],
    ['Requests', String(m.requestsTotal)],
    ['Errors (4xx, 5xx)', String(m.errorsTotal)],
    ['Connections', String(m.connections)],
    ['Entities', String(m.entities)],
    ['Uptime (s)', fmt(m.uptime, 0)],
  ];
  $('metrics').replaceChildren(...rows.flatMap(([k, v]) => {
    const dt = document.createElement('dt');
    dt.textContent = k;
    const dd = document.createElement('dd');
    dd.textContent = v;
    return [dt, dd];
  }));
}

// ---- start ----------------------------------------------------------------

async function start() {
  $('key-form').addEventListener('submit', onKeySubmit);
  $('account').addEventListener('change', () => useAccount($('account').value));
  $('create-table').addEventListener('submit', onCreateTable);
  $('more-tables').addEventListener('click', () => loadTables(true));
  $('delete-table').addEventListener('click', onDeleteTable);
  $('query').addEventListener('submit', onQuery);
  $('first').addEventListener('click', () => loadPage(0, state.tokens, { fromTop: true }));
  $('prev').addEventListener('click', () => loadPage(state.page - 1, state.tokens, { fromTop: true }));
  $('next').addEventListener('click', goNext);
  $('new-entity').addEventListener('click', (e) => openEditor(null, e.currentTarget));
  $('export-jsonl').addEventListener('click', () => onExport('jsonl'));
  $('export-csv').addEventListener('click', () => onExport('csv'));
  $('editor-form').addEventListener('submit', onSave);
  $('editor-reload').addEventListener('click', onReload);
  $('delete-entity').addEventListener('click', onDeleteEntity);
  $('cancel').addEventListener('click', closeEditor);
  $('editor').addEventListener('cancel', (e) => {
    e.preventDefault();
    closeEditor();
  });
  $('add-prop').addEventListener('click', () => {
    const div = propRow({ name: '', type: 'Edm.String', text: '' }, $('props').children.length);
    $('props').append(div);
    div.querySelector('input').focus();
  });
  const poller = new MetricsPoller(renderMetrics, (why) => {
    $('metrics').textContent = `Metrics unavailable: ${why}`;
  });
  $('metrics-panel').addEventListener('toggle', () => ($('metrics-panel').open ? poller.start() : poller.stop()));

  if (!cryptoAvailable()) {
    showError(new Error('This page signs its requests with WebCrypto, which the browser offers only in a secure context. ' +
      'Open it as http://127.0.0.1:<port>/_tablestone/ui/ or http://localhost:<port>/_tablestone/ui/ ' +
      '(an SSH tunnel to a remote server works), or behind HTTPS.'));
    return;
  }
  const response = await fetch('config.json', { cache: 'no-store' });
  state.config = await response.json();
  for (const a of state.config.accounts) $('account').add(new Option(a, a));
  const initial = state.config.accounts.includes(kDevAccount) ? kDevAccount : state.config.accounts[0];
  $('account').value = initial;
  await useAccount(initial);
  document.body.dataset.ready = 'true';
}

start().catch((e) => showError(e));
