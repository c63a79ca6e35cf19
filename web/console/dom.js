// DOM helpers: every value is set with textContent or a property, never parsed as HTML.

// el('td', {class: 'x', title: t}, 'text', child) — strings become text nodes.
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') node.className = value;
    else if (name === 'dataset') Object.assign(node.dataset, value);
    else if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else if (name in node && typeof value !== 'string') node[name] = value;
    else node.setAttribute(name, String(value));
  }
  append(node, children);
  return node;
}

export function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

// A time as the operator reads it: local time, and the ISO form in the title.
export function time(value) {
  if (!value) return el('span', {class: 'muted'}, '—');
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return el('span', {}, String(value));
  return el('time', {datetime: date.toISOString(), title: date.toISOString()},
            date.toLocaleString());
}

// A table: columns [{label, cell(row) -> Node|string}], rows; an empty note when there are none.
export function table(columns, rows, empty) {
  if (rows.length === 0) return el('p', {class: 'muted empty'}, empty);
  return el('div', {class: 'scroll'},
    el('table', {},
      el('thead', {}, el('tr', {}, columns.map((c) => el('th', {scope: 'col'}, c.label)))),
      el('tbody', {}, rows.map((row) => el('tr', {},
        columns.map((c) => el('td', {dataset: {label: c.label}}, c.cell(row))))))));
}

// Any JSON value as indented text.
export function pre(value) {
  return el('pre', {class: 'raw'}, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
}

export function badge(text, kind) {
  return el('span', {class: `badge ${kind || text || ''}`}, text ?? '—');
}

// svg('rect', {x: 1, class: 'bar'}, child) — an SVG element; every attribute is set as a string and
// strings become text nodes, as in el().
const SVG_NS = 'http://www.w3.org/2000/svg';
export function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    node.setAttribute(name, String(value));
  }
  return append(node, children);
}
