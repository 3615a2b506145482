// The live metrics panel: polls GET /_tablestone/metrics (Prometheus text,
// docs/observability.md) and shows rates over the last interval, computed
// from the difference of two scrapes of the counters.

import { noAnswer } from './table_client.js';

// Sums of the figures the panel needs from one exposition.
export function summarize(text) {
  const s = { requests: 0, errors: 0, latencySum: 0, latencyCount: 0, connections: 0, uptime: 0, entities: 0 };
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-z_]+)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!m) continue;
    const [, name, labels = '', raw] = m;
    const value = Number(raw);
    if (name === 'tablestone_requests_total') {
      s.requests += value;
      if (/status_class="[45]xx"/.test(labels)) s.errors += value;
    } else if (name === 'tablestone_request_duration_seconds_sum') {
      s.latencySum += value;
    } else if (name === 'tablestone_request_duration_seconds_count') {
      s.latencyCount += value;
    } else if (name === 'tablestone_http_connections_active') {
      s.connections = value;
    } else if (name === 'tablestone_uptime_seconds') {
      s.uptime = value;
    } else if (name === 'tablestone_entities') {
      // Exact, one series per account: the panel shows their sum. (Not
      // tablestone_storage_estimated_entities, RocksDB's rough estimate.)
      s.entities += value;
    }
  }
  return s;
}

// Figures to show, from two summaries `seconds` apart (first scrape: totals only).
export function rates(previous, current, seconds) {
  const out = {
    requestsTotal: current.requests,
    errorsTotal: current.errors,
    connections: current.connections,
    uptime: current.uptime,
    entities: current.entities,
    requestsPerSecond: null,
    errorsPerSecond: null,
    latencyMs: null,
  };
  if (previous && seconds > 0) {
    out.requestsPerSecond = Math.max(0, current.requests - previous.requests) / seconds;
    out.errorsPerSecond = Math.max(0, current.errors - previous.errors) / seconds;
    const n = current.latencyCount - previous.latencyCount;
    out.latencyMs = n > 0 ? ((current.latencySum - previous.latencySum) / n) * 1000 : null;
  } else if (current.latencyCount > 0) {
    out.latencyMs = (current.latencySum / current.latencyCount) * 1000;
  }
  return out;
}

export class MetricsPoller {
  constructor(onFigures, onError, intervalMs = 2000) {
    this.onFigures = onFigures;
    this.onError = onError;
    this.intervalMs = intervalMs;
    this.timer = null;
    this.previous = null;
    this.previousAt = 0;
  }

  start() {
    if (this.timer !== null) return;
    this.poll();
    this.timer = setInterval(() => this.poll(), this.intervalMs);
  }

  stop() {
    clearInterval(this.timer);
    this.timer = null;
    this.previous = null;
  }

  async poll() {
    try {
      let response;
      try {
        response = await fetch('/_tablestone/metrics', { cache: 'no-store' });
      } catch {
        throw new Error(noAnswer(location.origin));
      }
      if (!response.ok) throw new Error(`metrics answered ${response.status}`);
      const now = performance.now();
      const current = summarize(await response.text());
      this.onFigures(rates(this.previous, current, (now - this.previousAt) / 1000));
      this.previous = current;
      this.previousAt = now;
    } catch (e) {
      this.onError(e.message);
    }
  }
}
