// The Table REST API calls the page makes, signed with Shared Key Lite.
// Path-style URLs (/<account>/...) on the page's own origin. Errors become a
// TableError carrying the service's status, code and message as sent.

import { sharedKeyLite } from './signing.js';
import { parseWireJson } from './edm.js';

const kVersion = '2019-02-02';

export class TableError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
  describe() {
    // No HTTP answer at all: the browser's own words ("Failed to fetch",
    // "NetworkError when attempting to fetch resource") say nothing useful.
    if (this.status === 0) return this.message;
    return `${this.status} ${this.code}: ${this.message}`;
  }
}

// What to say when a request gets no HTTP answer at all (the server is
// stopped or unreachable): the browser's own words ("Failed to fetch",
// "NetworkError when attempting to fetch resource") name neither the server
// nor the likely cause.
export function noAnswer(origin) {
  return `The server at ${origin} did not answer: is tablestone still running? Start it again, then reload this page.`;
}

// Key literal of an entity path: quotes doubled, then percent-encoded.
function keyLiteral(value) {
  return encodeURIComponent(value.replaceAll("'", "''"));
}

export class TableClient {
  constructor(account, cryptoKey) {
    this.account = account;
    this.cryptoKey = cryptoKey;
  }

  url(path, params = {}) {
    const url = new URL(`/${this.account}/${path}`, location.origin);
    for (const [name, value] of Object.entries(params)) {
      if (value !== undefined && value !== null && value !== '') url.searchParams.set(name, value);
    }
    return url;
  }

  async send(method, url, { body, headers = {} } = {}) {
    const date = new Date().toUTCString();
    const all = {
      'x-ms-date': date,
      'x-ms-version': kVersion,
      Accept: 'application/json;odata=fullmetadata',
      DataServiceVersion: '3.0;NetFx',
      Authorization: await sharedKeyLite(this.cryptoKey, this.account, url, date),
      ...headers,
    };
    if (body !== undefined) all['Content-Type'] = 'application/json';
    let response;
    try {
      response = await fetch(url, { method, headers: all, body, cache: 'no-store' });
    } catch {
      throw new TableError(0, 'NetworkError', noAnswer(location.origin));
    }
    if (!response.ok) {
      const text = await response.text();
      let code = response.headers.get('x-ms-error-code') || response.statusText;
      let message = text || response.statusText;
      try {
        const error = JSON.parse(text)['odata.error'];
        code = error.code || code;
        message = error.message?.value ?? message;
      } catch {
        // Not JSON (a proxy's page, say): show it as it came.
      }
      throw new TableError(response.status, code, message);
    }
    return response;
  }

  // One page of table names; `next` is the NextTableName continuation or null.
  async listTables(next) {
    const response = await this.send('GET', this.url('Tables', { NextTableName: next }));
    const body = await response.json();
    return {
      names: body.value.map((t) => t.TableName),
      next: response.headers.get('x-ms-continuation-NextTableName'),
    };
  }

  async createTable(name) {
    await this.send('POST', this.url('Tables'), {
      body: JSON.stringify({ TableName: name }),
      headers: { Prefer: 'return-no-content' },
    });
  }

  async deleteTable(name) {
    await this.send('DELETE', this.url(`Tables('${keyLiteral(name)}')`));
  }

  // One page of a query. `token` is {pk, rk} from the previous page or null.
  async queryEntities(table, { filter, select, top }, token) {
    const url = this.url(`${encodeURIComponent(table)}()`, {
      $filter: filter,
      $select: select,
      $top: top,
      NextPartitionKey: token?.pk,
      NextRowKey: token?.rk,
    });
    const response = await this.send('GET', url);
    const body = parseWireJson(await response.text());
    const pk = response.headers.get('x-ms-continuation-NextPartitionKey');
    const rk = response.headers.get('x-ms-continuation-NextRowKey');
    return { entities: body.value, next: pk === null ? null : { pk, rk: rk ?? '' } };
  }

  entityPath(table, pk, rk) {
    return `${encodeURIComponent(table)}(PartitionKey='${keyLiteral(pk)}',RowKey='${keyLiteral(rk)}')`;
  }

  async getEntity(table, pk, rk) {
    const response = await this.send('GET', this.url(this.entityPath(table, pk, rk)));
    return parseWireJson(await response.text());
  }

  async insertEntity(table, body) {
    await this.send('POST', this.url(encodeURIComponent(table)), {
      body: JSON.stringify(body),
      headers: { Prefer: 'return-no-content' },
    });
  }

  // Update Entity (replace) guarded by the ETag the page read.
  async updateEntity(table, body, etag) {
    await this.send('PUT', this.url(this.entityPath(table, body.PartitionKey, body.RowKey)), {
      body: JSON.stringify(body),
      headers: { 'If-Match': etag },
    });
  }

  async deleteEntity(table, pk, rk, etag) {
    await this.send('DELETE', this.url(this.entityPath(table, pk, rk)), { headers: { 'If-Match': etag || '*' } });
  }
}
