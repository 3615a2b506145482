// The sentences the page says about what it lists (docs/ui.md), apart from
// the DOM so that node --test can check them (tests/unit/server/ui).

// "3 tables in account a." (`more`: the service has further pages of names).
export function tableCountText(count, more, account) {
  return `${count} ${count === 1 ? 'table' : 'tables'}${more ? ' shown (more on the server)' : ''} in account ${account}.`;
}

// What an empty page of entities says instead of bare headers. `more`: the
// page came with a continuation; the service may answer an empty page with
// one (a scan cut at its time or size limit), so that says "use Next", not
// "nothing matches".
export function emptyGridText({ table, filter, page, more }) {
  if (more) return 'No entities on this page; the query goes on: use Next.';
  if (page > 0) return 'No more entities: this is the end of the query.';
  if (filter !== '') return `No entities match $filter ${filter}. Change or clear the filter and run the query again.`;
  return `No entities: table ${table} is empty. Add one with New entity, or load a file with tablestone import (docs/export-format.md).`;
}
