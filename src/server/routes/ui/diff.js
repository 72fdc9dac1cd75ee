import { h } from './dom.js';

// Lines of `a` and `b` paired by their longest common subsequence:
// [{left, right, kind: 'same'|'removed'|'added'}]. Documents are small
// (thousands of lines at most), so the quadratic table is fine.
export function lineDiff(a, b) {
  const n = a.length, m = b.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const rows = [];
  let i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) { rows.push({ left: a[i++], right: b[j++], kind: 'same' }); }
    else if (j >= m || (i < n && lcs[i + 1][j] >= lcs[i][j + 1])) { rows.push({ left: a[i++], kind: 'removed' }); }
    else { rows.push({ right: b[j++], kind: 'added' }); }
  }
  return rows;
}

// Two columns, the old text on the left and the new on the right; each
// changed line says so to a screen reader too.
export function sideBySide(oldText, newText, oldTitle, newTitle) {
  const rows = lineDiff(oldText.split('\n'), newText.split('\n'));
  const left = h('ol', { 'aria-label': oldTitle });
  const right = h('ol', { 'aria-label': newTitle });
  for (const r of rows) {
    if (r.kind === 'same') {
      left.append(h('li', {}, r.left));
      right.append(h('li', {}, r.right));
    } else if (r.kind === 'removed') {
      left.append(h('li', { class: 'removed', 'aria-label': `removed: ${r.left}` }, r.left));
      right.append(h('li', { class: 'blank', 'aria-hidden': 'true' }));
    } else {
      left.append(h('li', { class: 'blank', 'aria-hidden': 'true' }));
      right.append(h('li', { class: 'added', 'aria-label': `added: ${r.right}` }, r.right));
    }
  }
  return h('div', { class: 'diff' },
    h('div', {}, h('h3', {}, oldTitle), left),
    h('div', {}, h('h3', {}, newTitle), right));
}
