// The Bills page's chart: per bill day, the matched, repaired and discrepancy items of the latest
// run of each channel, as stacked bars of a hand-made SVG (a <title> per bar and per segment), with
// the same numbers as a table for readers who cannot see it.
import {el, svg, table} from '../dom.js';

const SERIES = [
  {key: 'matched', one: 'matched', many: 'matched'},
  {key: 'repaired', one: 'repaired', many: 'repaired'},
  {key: 'discrepancies', one: 'discrepancy', many: 'discrepancies'},
];
// The drawing is made at the width it is shown at (its text stays legible), within these bounds.
const WIDTH_MIN = 300;
const WIDTH_MAX = 1400;
const HEIGHT = 220;
const MARGIN = {top: 12, right: 8, bottom: 26, left: 40};
// Beyond this many days only the days with runs get a slot.
const DAYS_MAX = 400;
const DAY_MS = 86400000;

function dayAfter(date) {
  return new Date(Date.parse(`${date}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 10);
}

// [{date, runs, matched, repaired, discrepancies}] for every day from..to (inclusive), counting
// only the newest run of each channel and day (the API lists the newest first).
export function daysOf(runs, from, to) {
  const byDay = new Map();
  const seen = new Set();
  for (const run of runs) {
    const key = `${run.channel} ${run.date}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const day = byDay.get(run.date) || {date: run.date, runs: 0, matched: 0, repaired: 0, discrepancies: 0};
    day.runs += 1;
    for (const {key: count} of SERIES) day[count] += Number(run[count]) || 0;
    byDay.set(run.date, day);
  }
  const days = [];
  if (from && to && from <= to) {
    for (let date = from; date <= to && days.length <= DAYS_MAX; date = dayAfter(date)) {
      days.push(byDay.get(date) || {date, runs: 0, matched: 0, repaired: 0, discrepancies: 0});
    }
  }
  if (days.length === 0 || days.length > DAYS_MAX) {
    return [...byDay.values()].sort((a, b) => a.date.localeCompare(b.date));
  }
  return days;
}

function plural(n, one, many) {
  return `${n} ${n === 1 ? one : many}`;
}

function dayTitle(day) {
  if (day.runs === 0) return `${day.date}: no run`;
  const total = day.matched + day.repaired + day.discrepancies;
  if (total === 0) return `${day.date}: ${plural(day.runs, 'run', 'runs')}, no items`;
  return `${day.date}: ${day.matched} matched, ${day.repaired} repaired, ` +
         `${plural(day.discrepancies, 'discrepancy', 'discrepancies')}`;
}

// One day's stacked bar: matched at the bottom, then repaired, then discrepancies.
function bar(day, x, width, scale) {
  const group = svg('g', {class: 'bar', 'data-date': day.date, role: 'img'}, svg('title', {}, dayTitle(day)));
  let y = HEIGHT - MARGIN.bottom;
  const total = day.matched + day.repaired + day.discrepancies;
  if (total === 0) {
    group.append(svg('rect', {class: 'seg empty', x, y: y - 2, width, height: 2}));
    return group;
  }
  for (const {key, one, many} of SERIES) {
    const height = day[key] * scale;
    if (height <= 0) continue;
    y -= height;
    group.append(svg('rect', {class: `seg ${key}`, x, y, width, height},
                     svg('title', {}, `${day.date}: ${plural(day[key], one, many)}`)));
  }
  return group;
}

function axes(top, days, width) {
  const left = MARGIN.left;
  const bottom = HEIGHT - MARGIN.bottom;
  const right = width - MARGIN.right;
  const label = (x, y, text, anchor) => svg('text', {x, y, 'text-anchor': anchor}, text);
  const parts = [
    svg('line', {class: 'axis', x1: left, y1: bottom, x2: right, y2: bottom}),
    svg('line', {class: 'grid', x1: left, y1: MARGIN.top, x2: right, y2: MARGIN.top}),
    label(left - 6, MARGIN.top + 4, String(top), 'end'),
    label(left - 6, bottom, '0', 'end'),
  ];
  if (days.length) {
    parts.push(label(left, HEIGHT - 8, days[0].date, 'start'));
    if (days.length > 1) parts.push(label(right, HEIGHT - 8, days[days.length - 1].date, 'end'));
  }
  return parts;
}

// The chart drawn `shownWidth` pixels wide, its legend and its table.
export function chart(runs, from, to, shownWidth) {
  const width = Math.round(Math.min(WIDTH_MAX, Math.max(WIDTH_MIN, shownWidth || 640)));
  const days = daysOf(runs, from, to);
  const top = Math.max(1, ...days.map((d) => d.matched + d.repaired + d.discrepancies));
  const plotWidth = width - MARGIN.left - MARGIN.right;
  const scale = (HEIGHT - MARGIN.top - MARGIN.bottom) / top;
  const slot = days.length ? plotWidth / days.length : plotWidth;
  const barWidth = Math.max(1, slot * 0.7);
  const ran = days.filter((d) => d.runs > 0);
  const picture = svg('svg', {id: 'bill-chart', viewBox: `0 0 ${width} ${HEIGHT}`, role: 'group',
                              'aria-labelledby': 'bill-chart-title'},
    svg('title', {id: 'bill-chart-title'},
        `Bill items per day from ${days[0]?.date ?? '—'} to ${days[days.length - 1]?.date ?? '—'}: ` +
        'matched, repaired and discrepancies'),
    axes(top, days, width),
    ran.map((d) => bar(d, MARGIN.left + days.indexOf(d) * slot + (slot - barWidth) / 2, barWidth, scale)));
  const legend = el('ul', {class: 'legend'}, SERIES.map(({key, many}) =>
    el('li', {}, el('span', {class: `swatch ${key}`, 'aria-hidden': 'true'}), many)));
  const fallback = el('details', {class: 'chart-table'}, el('summary', {}, 'The chart as a table'),
    table([
      {label: 'Day', cell: (d) => d.date},
      {label: 'Runs', cell: (d) => String(d.runs)},
      {label: 'Matched', cell: (d) => String(d.matched)},
      {label: 'Repaired', cell: (d) => String(d.repaired)},
      {label: 'Discrepancies', cell: (d) => String(d.discrepancies)},
    ], ran, 'No run in these days.'));
  return el('figure', {class: 'card chart'}, picture, legend, fallback,
            el('figcaption', {class: 'muted'}, 'The newest run of each channel and day counts; ' +
               'a day without a bar had no run.'));
}
