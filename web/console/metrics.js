// The header's live counters from /metrics (Prometheus text): callbacks/s by result, in flight,
// relay lag.
import {metricsText} from './api.js';
import {el, clear} from './dom.js';

const POLL_MS = 2000;

// {name: [{labels: {..}, value}]} from the text exposition format.
export function parsePrometheus(text) {
  const series = {};
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const labels = {};
    for (const pair of (match[3] || '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1]] = pair[2];
    }
    (series[match[1]] ||= []).push({labels, value: Number(match[4])});
  }
  return series;
}

function totalsByResult(series) {
  const totals = {};
  for (const sample of series.seatflow_payment_callback_total || []) {
    const result = sample.labels.result || 'unknown';
    totals[result] = (totals[result] || 0) + sample.value;
  }
  return totals;
}

function gauge(series, name) {
  const samples = series[name] || [];
  return samples.length ? samples[0].value : null;
}

export function startCounters(node) {
  let previous = null;
  let timer = null;
  const tick = async () => {
    try {
      const series = parsePrometheus(await metricsText());
      const now = performance.now();
      const totals = totalsByResult(series);
      const rates = {};
      if (previous) {
        const seconds = (now - previous.at) / 1000;
        for (const [result, total] of Object.entries(totals)) {
          rates[result] = Math.max(0, (total - (previous.totals[result] || 0)) / seconds);
        }
      }
      previous = {at: now, totals};
      render(node, rates, gauge(series, 'seatflow_inflight_callbacks'),
             gauge(series, 'seatflow_event_relay_lag_seconds'), previous !== null);
    } catch (error) {
      clear(node).append(el('span', {class: 'counter bad'}, 'metrics unavailable'));
    }
  };
  tick();
  timer = setInterval(tick, POLL_MS);
  return () => clearInterval(timer);
}

function counter(label, value, kind) {
  return el('span', {class: `counter ${kind || ''}`}, el('span', {class: 'label'}, label), ' ',
            el('strong', {}, value));
}

function render(node, rates, inflight, lagSeconds) {
  clear(node);
  const shown = ['applied', 'duplicate', 'discrepancy', 'conflict', 'unavailable'];
  const rate = (r) => (rates[r] === undefined ? '…' : rates[r].toFixed(1));
  node.append(el('span', {class: 'label'}, 'callbacks/s'));
  for (const result of shown) node.append(counter(result, rate(result), result));
  node.append(counter('in flight', inflight === null ? '—' : String(inflight)));
  node.append(counter('relay lag', lagSeconds === null ? '—' : `${lagSeconds.toFixed(2)} s`,
                      lagSeconds > 5 ? 'bad' : ''));
}
