// Edm types between the wire (OData JSON) and the page's typed fields.
// On the wire (Learn: payload-format-for-table-service-operations) Int64,
// DateTime, Guid and Binary carry "<name>@odata.type"; Int32, Double, Boolean
// and String do not, and a Double is told from an Int32 by its number text
// (the server always writes a '.' or exponent).

export const kTypes = ['Edm.String', 'Edm.Int32', 'Edm.Int64', 'Edm.Double', 'Edm.Boolean', 'Edm.DateTime', 'Edm.Guid', 'Edm.Binary'];
export const kSystem = ['PartitionKey', 'RowKey', 'Timestamp'];

// JSON.parse's reviver sees a number's source text in newer engines
// (Chromium 114+); elsewhere the numbers are marked in the text first.
const kHasSource = JSON.parse('1.0', (key, value, context) => context?.source) === '1.0';
const kMarker = '\u0000#number:';

// Every number token outside strings -> a string "<marker><its text>".
function markNumbers(text) {
  let out = '';
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      let j = i + 1;
      while (j < text.length && '0123456789eE+-.'.includes(text[j])) j++;
      out += text.slice(start, i) + JSON.stringify(kMarker + text.slice(i, j));
      start = j;
      i = j - 1;
    }
  }
  return out + text.slice(start);
}

// Parses a response body; a number becomes {number, text} so that a Double
// written "6.0" is not taken for an Int32.
export function parseWireJson(text) {
  if (kHasSource) {
    return JSON.parse(text, (key, value, context) =>
      typeof value === 'number' ? { number: value, text: context.source } : value);
  }
  return JSON.parse(markNumbers(text), (key, value) =>
    typeof value === 'string' && value.startsWith(kMarker)
      ? { number: Number(value.slice(kMarker.length)), text: value.slice(kMarker.length) }
      : value);
}

// A wire entity -> {pk, rk, etag, timestamp, props: [{name, type, text}]}:
// `text` is the value as the page shows and edits it.
export function fromWire(entity) {
  const props = [];
  for (const [name, value] of Object.entries(entity)) {
    if (name.startsWith('odata.') || name.includes('@odata.') || kSystem.includes(name)) continue;
    let type = entity[`${name}@odata.type`];
    let text;
    if (value !== null && typeof value === 'object' && 'number' in value) {
      type ??= /[.eE]/.test(value.text) ? 'Edm.Double' : 'Edm.Int32';
      text = type === 'Edm.Double' ? doubleText(value.number) : value.text;
    } else if (typeof value === 'boolean') {
      type ??= 'Edm.Boolean';
      text = String(value);
    } else {
      type ??= 'Edm.String';
      text = value === null ? '' : String(value);
    }
    props.push({ name, type, text });
  }
  return {
    pk: entity.PartitionKey,
    rk: entity.RowKey,
    etag: entity['odata.etag'],
    timestamp: entity.Timestamp,
    props,
  };
}

function doubleText(n) {
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return Object.is(n, -0) ? '-0.0' : `${n}.0`;
  return String(n);
}

const kGuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const kDateTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,7})?)?Z$/;

// Typed value of a field for the wire; throws Error naming the field when the
// text does not fit its type.
export function toWireValue(name, type, text) {
  const bad = (why) => new Error(`${name}: ${why}`);
  switch (type) {
    case 'Edm.String': return text;
    case 'Edm.Int32': {
      if (!/^-?\d+$/.test(text.trim())) throw bad('an Edm.Int32 is a whole number');
      const n = Number(text);
      if (n < -2147483648 || n > 2147483647) throw bad('out of the Edm.Int32 range');
      return n;
    }
    case 'Edm.Int64': {
      if (!/^-?\d+$/.test(text.trim())) throw bad('an Edm.Int64 is a whole number');
      const n = BigInt(text.trim());
      if (n < -(2n ** 63n) || n >= 2n ** 63n) throw bad('out of the Edm.Int64 range');
      return n.toString();
    }
    case 'Edm.Double': {
      const t = text.trim();
      if (t === 'NaN' || t === 'Infinity' || t === '-Infinity') return t;
      const n = Number(t);
      if (t === '' || Number.isNaN(n)) throw bad('an Edm.Double is a number, NaN, Infinity or -Infinity');
      return n;
    }
    case 'Edm.Boolean': {
      const t = text.trim().toLowerCase();
      if (t !== 'true' && t !== 'false') throw bad('an Edm.Boolean is true or false');
      return t === 'true';
    }
    case 'Edm.DateTime':
      if (!kDateTime.test(text.trim())) throw bad('an Edm.DateTime is UTC like 2024-05-01T12:00:00Z');
      return text.trim();
    case 'Edm.Guid':
      if (!kGuid.test(text.trim())) throw bad('an Edm.Guid looks like 0f8fad5b-d9cb-469f-a165-70867728950e');
      return text.trim().toLowerCase();
    case 'Edm.Binary':
      try {
        atob(text.trim());
      } catch {
        throw bad('an Edm.Binary is base64');
      }
      return text.trim();
    default:
      throw bad(`unknown type ${type}`);
  }
}

// The request body for PartitionKey, RowKey and typed props. Every type other
// than String is annotated, so a Double such as 6 is not read as an Int32.
export function toWireEntity(pk, rk, props) {
  const body = { PartitionKey: pk, RowKey: rk };
  const seen = new Set();
  for (const { name, type, text } of props) {
    if (name === '') throw new Error('A property needs a name.');
    if (kSystem.includes(name) || seen.has(name)) throw new Error(`${name}: the name is used twice or reserved.`);
    seen.add(name);
    const value = toWireValue(name, type, text);
    if (type !== 'Edm.String') body[`${name}@odata.type`] = type;
    body[name] = value;
  }
  return body;
}

// The text to save for an editor field that showed `stored`: `stored` itself
// when the field still holds it as the browser normalised it (a textarea
// reads CR LF and a lone CR back as LF), so an unedited value is sent back
// exactly as read; otherwise what the field holds.
export function unchangedText(current, stored) {
  if (stored === undefined) return current;
  return current === stored.replace(/\r\n?/g, '\n') ? stored : current;
}
