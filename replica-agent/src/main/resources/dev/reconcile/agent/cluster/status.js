'use strict';
// The agent's status page: reads GET /cluster with the read token and draws it. Every value from
// the agent (some of it published by other members, unauthenticated) goes into the page as text
// (textContent), never as HTML.
(function () {
  const KEY = 'reconcile.readToken';
  const REFRESH_MS = 2000;
  const SVG = 'http://www.w3.org/2000/svg';
  let token = sessionStorage.getItem(KEY) || '';
  const fromHash = /(?:^#|&)token=([^&]*)/.exec(location.hash);
  if (fromHash) {
    token = decodeURIComponent(fromHash[1]);
    sessionStorage.setItem(KEY, token);
    history.replaceState(null, '', location.pathname + location.search);
  }
  let waitingForToken = false;

  const $ = (id) => document.getElementById(id);

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }

  function ago(now, t) {
    if (!t) return 'never';
    const s = Math.max(0, Math.round((now - t) / 1000));
    if (s < 120) return s + ' s ago';
    if (s < 7200) return Math.round(s / 60) + ' min ago';
    return Math.round(s / 3600) + ' h ago';
  }

  function clock(t) {
    const d = new Date(t);
    return d.toTimeString().slice(0, 8);
  }

  function bytes(n) {
    if (n < 1024) return n + ' B';
    if (n < 1024 * 1024) return (n / 1024).toFixed(1) + ' KiB';
    return (n / 1024 / 1024).toFixed(1) + ' MiB';
  }

  function showLogin(message) {
    waitingForToken = true;
    $('main').hidden = true;
    $('login').hidden = false;
    $('login-error').textContent = message || '';
    $('token').focus();
  }

  function showError(message) {
    const e = $('error');
    e.textContent = message;
    e.hidden = !message;
  }

  $('login').addEventListener('submit', (ev) => {
    ev.preventDefault();
    token = $('token').value;
    sessionStorage.setItem(KEY, token);
    waitingForToken = false;
    load();
  });

  async function load() {
    const headers = token ? { Authorization: 'Bearer ' + token } : {};
    let r;
    try {
      r = await fetch('/cluster?rounds=200', { headers: headers, cache: 'no-store' });
    } catch (e) {
      showError('cannot reach the agent: ' + e);
      return;
    }
    if (r.status === 401 || r.status === 403) {
      showLogin(token ? 'token not accepted' : '');
      return;
    }
    let body;
    try {
      body = await r.json();
    } catch (e) {
      showError('HTTP ' + r.status + ': not JSON');
      return;
    }
    if (!r.ok) {
      showError('HTTP ' + r.status + ': ' + (body.error || ''));
      return;
    }
    showError('');
    $('login').hidden = true;
    $('main').hidden = false;
    render(body);
  }

  function render(d) {
    $('node').textContent = d.nodeId + ' (cluster ' + d.clusterName + ')';
    const published = d.members.filter((m) => m.published);
    const differing = published.filter((m) => !m.self && m.differs);
    $('summary').textContent =
      d.members.length + ' members, ' + differing.length + ' differ from this node; ' +
      d.partitions + ' partitions; fanout ' + d.policy.fanout + ', repair every ' +
      d.policy.repairInterval + ', gossip every ' + d.policy.gossipInterval +
      '; updated ' + clock(d.now) +
      (d.entriesFresh === false ? '; some members did not answer in time: their last known entries shown' : '');
    members(d);
    matrix(d);
    chart(d);
    rounds(d);
  }

  function members(d) {
    const body = $('members').tBodies[0];
    body.replaceChildren();
    for (const m of d.members) {
      const tr = el('tr');
      tr.dataset.member = m.member;
      tr.appendChild(el('td', (m.nodeId || '(no entry) ' + m.member) + (m.self ? ' (this node)' : '') +
        (m.member === d.coordinator ? ' (coordinator)' : '')));
      tr.appendChild(el('td', m.peer || ''));
      tr.appendChild(el('td', m.http || ''));
      tr.appendChild(el('td', m.published ? m.records.toLocaleString() : '', 'num'));
      let parts = '';
      if (m.published && !m.self) {
        parts = m.differs ? m.differingPartitions.length + ' differ' : 'same';
      }
      tr.appendChild(el('td', parts, m.differs && !m.self ? 'failed' : ''));
      const last = m.lastRound;
      const lr = el('td', last ? (last.ok ? 'ok' : 'failed') + ', ' + ago(d.now, last.at) +
        ', ' + last.durationMillis + ' ms' : '', last ? (last.ok ? 'ok' : 'failed') : '');
      if (last && !last.ok && last.error) lr.title = last.error;
      tr.appendChild(lr);
      tr.appendChild(el('td', m.self ? '' : ago(d.now, m.lastSuccessAt)));
      tr.appendChild(el('td', m.published ? ago(d.now, m.publishedAt) : 'no entry'));
      body.appendChild(tr);
    }
    const left = (d.departed || []).slice(-5).map((x) => (x.nodeId || x.member) + ' ' + ago(d.now, x.leftAt));
    $('departed').textContent = left.length ? 'Left: ' + left.join(', ') : '';
  }

  function matrix(d) {
    const t = $('matrix');
    t.replaceChildren();
    const per = d.partitionsPerBucket;
    const head = el('tr');
    head.appendChild(el('th', ''));
    for (let b = 0; b < d.digestBuckets; b++) {
      head.appendChild(el('th', per === 1 ? String(b) : (b * per) + '-' + ((b + 1) * per - 1)));
    }
    t.appendChild(head);
    for (const m of d.members) {
      const tr = el('tr');
      tr.dataset.member = m.member;
      tr.appendChild(el('th', m.nodeId || m.member));
      const diff = new Set(m.differingPartitions || []);
      for (let b = 0; b < d.digestBuckets; b++) {
        let state;
        if (m.self) state = 'self';
        else if (!m.published) state = 'unknown';
        else state = diff.has(b * per) ? 'differs' : 'same';
        const td = el('td', null, state);
        td.dataset.state = state;
        td.dataset.partition = String(b * per);
        td.title = (m.nodeId || m.member) + ', partition' + (per === 1 ? ' ' + b :
          's ' + (b * per) + '-' + ((b + 1) * per - 1)) + ': ' + state;
        tr.appendChild(td);
      }
      t.appendChild(tr);
    }
  }

  function chart(d) {
    const svg = $('chart');
    svg.replaceChildren();
    const w = 720, h = 160, top = 10, bottom = 20, n = 30;
    const rs = d.rounds || [];
    if (!rs.length) {
      $('chart-note').textContent = 'No rounds yet.';
      return;
    }
    const end = d.now;
    const start = Math.min(end - 60000, rs[0].at);
    const width = (end - start) / n;
    const ok = new Array(n).fill(0), failed = new Array(n).fill(0), by = new Array(n).fill(0);
    for (const r of rs) {
      const i = Math.min(n - 1, Math.max(0, Math.floor((r.at - start) / width)));
      if (r.ok) ok[i]++; else failed[i]++;
      by[i] += r.protocolBytes;
    }
    const max = Math.max(1, ...ok.map((x, i) => x + failed[i]));
    const bw = w / n;
    for (let i = 0; i < n; i++) {
      const hOk = (h - top - bottom) * ok[i] / max;
      const hFail = (h - top - bottom) * failed[i] / max;
      const base = h - bottom;
      for (const [cls, y, hh, c] of [['bar-ok', base - hOk, hOk, ok[i]], ['bar-failed', base - hOk - hFail, hFail, failed[i]]]) {
        if (hh <= 0) continue;
        const r = document.createElementNS(SVG, 'rect');
        r.setAttribute('x', String(i * bw + 1));
        r.setAttribute('y', String(y));
        r.setAttribute('width', String(bw - 2));
        r.setAttribute('height', String(hh));
        r.setAttribute('class', cls);
        const title = document.createElementNS(SVG, 'title');
        title.textContent = clock(start + i * width) + ': ' + c + (cls === 'bar-ok' ? ' ok' : ' failed') +
          ', ' + bytes(by[i]);
        r.appendChild(title);
        svg.appendChild(r);
      }
    }
    const axis = document.createElementNS(SVG, 'line');
    axis.setAttribute('x1', '0'); axis.setAttribute('x2', String(w));
    axis.setAttribute('y1', String(h - bottom)); axis.setAttribute('y2', String(h - bottom));
    axis.setAttribute('class', 'axis');
    svg.appendChild(axis);
    for (const [x, t, anchor] of [[0, start, 'start'], [w, end, 'end']]) {
      const label = document.createElementNS(SVG, 'text');
      label.setAttribute('x', String(x)); label.setAttribute('y', String(h - 5));
      label.setAttribute('text-anchor', anchor);
      label.textContent = clock(t);
      svg.appendChild(label);
    }
    const total = rs.reduce((a, r) => a + r.protocolBytes, 0);
    $('chart-note').textContent = rs.length + ' rounds since ' + clock(start) + ' (' +
      rs.filter((r) => !r.ok).length + ' failed), ' + bytes(total) +
      ' of protocol; bars: rounds per ' + Math.round(width / 1000) + ' s, at most ' + max + '.';
  }

  function rounds(d) {
    const body = $('rounds').tBodies[0];
    body.replaceChildren();
    const rs = (d.rounds || []).slice(-20).reverse();
    for (const r of rs) {
      const tr = el('tr');
      tr.appendChild(el('td', clock(r.at)));
      tr.appendChild(el('td', r.nodeId + ' (' + r.peer + ')'));
      tr.appendChild(el('td', r.reason));
      const res = el('td', r.ok ? 'ok' : 'failed', r.ok ? 'ok' : 'failed');
      if (!r.ok && r.error) res.title = r.error;
      tr.appendChild(res);
      tr.appendChild(el('td', r.durationMillis + ' ms', 'num'));
      tr.appendChild(el('td', bytes(r.protocolBytes), 'num'));
      tr.appendChild(el('td', r.recordsSent + ' / ' + r.recordsReceived, 'num'));
      body.appendChild(tr);
    }
  }

  load();
  setInterval(() => { if (!waitingForToken) load(); }, REFRESH_MS);
})();
