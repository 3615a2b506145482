// Shared Key Lite signing for the Table service (Learn: authorize-with-shared-key):
//   StringToSign = x-ms-date + "\n" + CanonicalizedResource
//   CanonicalizedResource = "/" + account + <path as sent> [+ "?comp=" + comp]
// The server checks the same string (protocol/auth/shared_key.h). The path is
// taken from a URL object, so it is exactly the path fetch() puts on the wire.
// HMAC-SHA256 comes from WebCrypto, which browsers offer only in a secure
// context (https, or http on 127.0.0.1 / localhost).

const encoder = new TextEncoder();

export function cryptoAvailable() {
  return globalThis.isSecureContext === true && globalThis.crypto?.subtle !== undefined;
}

export function base64ToBytes(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export function bytesToBase64(bytes) {
  let binary = '';
  for (const b of new Uint8Array(bytes)) binary += String.fromCharCode(b);
  return btoa(binary);
}

// A non-extractable HMAC key from a base64 account key; throws on bad base64.
export async function importAccountKey(base64Key) {
  const raw = base64ToBytes(base64Key.trim());
  if (raw.length === 0) throw new Error('The key is empty.');
  return crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
}

export function canonicalizedResource(account, url) {
  const comp = url.searchParams.get('comp');
  return `/${account}${url.pathname}` + (comp === null ? '' : `?comp=${comp}`);
}

// The Authorization header value for a request to `url` dated `date` (RFC 1123).
export async function sharedKeyLite(cryptoKey, account, url, date) {
  const toSign = `${date}\n${canonicalizedResource(account, url)}`;
  const mac = await crypto.subtle.sign('HMAC', cryptoKey, encoder.encode(toSign));
  return `SharedKeyLite ${account}:${bytesToBase64(mac)}`;
}
