(function () {
  'use strict';
  var token = document.body.getAttribute('data-token');
  var $ = function (id) { return document.getElementById(id); };
  var NA = 'not available';

  function show(id, value) {
    var e = $(id);
    if (!e) return;
    if (value === undefined || value === null) { e.textContent = NA; e.classList.add('na'); }
    else { e.textContent = String(value); e.classList.remove('na'); }
  }
  function fixed(v, digits) {
    if (typeof v !== 'number' || !isFinite(v)) return null;
    return v >= 100 ? String(Math.round(v)) : v.toFixed(digits);
  }
  function ms(seconds) { return seconds === null || seconds === undefined ? null : fixed(seconds * 1000, 1) + ' ms'; }
  function message(text, isError) {
    var m = $('message');
    m.textContent = text;
    m.className = isError ? 'error' : '';
  }
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }

  // An endpoint's URL beside the page's, without the user:password a URL may carry (fetch
  // refuses those; the browser still sends the proxy's cached credentials).
  function url(path) {
    var u = new URL(path, window.location.href);
    u.username = '';
    u.password = '';
    return u.href;
  }
  // GET: the JSON, or null when the endpoint does not exist (404) in this dibs.
  function getJSON(path) {
    return fetch(url(path), { cache: 'no-store' }).then(function (r) {
      if (r.status === 404) return null;
      if (!r.ok) throw new Error(path + ': HTTP ' + r.status);
      return r.json();
    });
  }
  // Served to another host, the page has no token: it shows the run, and changes nothing.
  var readOnly = 'read-only: the controls take changes from this host only (open the page on it, or through the proxy)';
  // POST with the page's token; rejects with the server's reason.
  function post(path, body) {
    if (!token) return Promise.reject(new Error(readOnly));
    return fetch(url(path), {
      method: 'POST',
      headers: { 'X-Dibs-Token': token, 'Content-Type': 'application/json' },
      body: JSON.stringify(body || {})
    }).then(function (r) {
      return r.text().then(function (t) {
        var data = null;
        try { data = t ? JSON.parse(t) : null; } catch (e) { data = null; }
        if (r.status === 404) throw new Error(path + ' is not available in this dibs');
        if (!r.ok) throw new Error((data && data.error) || (path + ': HTTP ' + r.status));
        return data;
      });
    });
  }
  function act(label, path, body) {
    message(label + '...');
    return post(path, body).then(function (data) {
      message(label + ': ' + JSON.stringify(data));
      return poll();
    }, function (err) { message(label + ' failed: ' + err.message, true); });
  }

  // ---- the charts -------------------------------------------------------------------------
  var SVGNS = 'http://www.w3.org/2000/svg';
  function svgEl(tag, attrs) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    return e;
  }
  function niceMax(v) {
    if (!(v > 0)) return 1;
    var p = Math.pow(10, Math.floor(Math.log10(v)));
    var steps = [1, 2, 2.5, 5, 10];
    for (var i = 0; i < steps.length; i++) if (steps[i] * p >= v) return steps[i] * p;
    return 10 * p;
  }
  // series: [{values: [number|null per sample], color}], times: seconds before now (<= 0).
  function drawChart(svg, times, series, unit) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    // Drawn in the element's own pixels, so that the text is not stretched with the chart.
    var W = Math.max(200, Math.round(svg.getBoundingClientRect().width) || 600), H = 170, L = 52, R = 8, T = 10, B = 20;
    svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
    var span = Math.max(60, times.length ? -times[0] : 0);
    var max = 0;
    series.forEach(function (s) { s.values.forEach(function (v) { if (v !== null && v > max) max = v; }); });
    max = niceMax(max);
    var x = function (t) { return L + (W - L - R) * (1 + t / span); };
    var y = function (v) { return T + (H - T - B) * (1 - v / max); };
    for (var g = 0; g <= 4; g++) {
      var v = max * g / 4;
      svg.appendChild(svgEl('line', { x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: '#eaecf0' }));
      var label = svgEl('text', { x: L - 4, y: y(v) + 4, 'text-anchor': 'end' });
      label.textContent = (v >= 100 ? Math.round(v) : +v.toFixed(v >= 10 ? 1 : 2)) + (g === 4 ? ' ' + unit : '');
      svg.appendChild(label);
    }
    [[-span, Math.round(span / 60) + ' min ago'], [0, 'now']].forEach(function (p) {
      var t = svgEl('text', { x: x(p[0]), y: H - 4, 'text-anchor': p[0] === 0 ? 'end' : 'start' });
      t.textContent = p[1];
      svg.appendChild(t);
    });
    series.forEach(function (s) {
      var d = '', pen = false;
      for (var i = 0; i < times.length; i++) {
        var val = s.values[i];
        if (val === null || val === undefined) { pen = false; continue; }
        d += (pen ? 'L' : 'M') + x(times[i]).toFixed(1) + ' ' + y(val).toFixed(1);
        pen = true;
      }
      if (d) svg.appendChild(svgEl('path', { d: d, fill: 'none', stroke: s.color, 'stroke-width': 1.6 }));
    });
  }

  var lastHistory = null;
  function renderHistory(h) {
    lastHistory = h;
    if (!h || !h.samples) {
      $('chart_note').textContent = 'history ' + NA;
      return;
    }
    var s = h.samples;
    var times = s.map(function (p) { return p.t; });
    var pick = function (k, scale) { return s.map(function (p) { return p[k] === null ? null : p[k] * (scale || 1); }); };
    drawChart($('chart_rate'), times, [
      { values: pick('requests_per_s'), color: '#98a2b3' },
      { values: pick('throttled_per_s'), color: '#b42318' },
      { values: pick('docs_per_s'), color: '#1f5fbf' }], '/s');
    drawChart($('chart_latency'), times, [
      { values: pick('p99_s', 1000), color: '#b54708' },
      { values: pick('p50_s', 1000), color: '#12805c' }], 'ms');
    $('chart_note').textContent = s.length ? '' : 'the first samples come within seconds';
    // The current rates: the mean of the last 10 seconds.
    var recent = s.slice(-10);
    var mean = function (k) {
      if (!recent.length) return null;
      var sum = 0;
      recent.forEach(function (p) { sum += p[k]; });
      return sum / recent.length;
    };
    show('docs_rate', fixed(mean('docs_per_s'), 1));
    var rps = mean('requests_per_s');
    show('requests_rate', rps === null ? null : fixed(rps, 1) + '/s');
  }

  // ---- /status ----------------------------------------------------------------------------
  // Seconds as "1m05s", "2h03m" (as the terminal's progress line says them).
  function etaText(s) {
    if (typeof s !== 'number' || !isFinite(s)) return null;
    s = Math.max(0, Math.round(s));
    var two = function (n) { return (n < 10 ? '0' : '') + n; };
    if (s >= 3600) return Math.floor(s / 3600) + 'h' + two(Math.floor((s % 3600) / 60)) + 'm';
    return Math.floor(s / 60) + 'm' + two(s % 60) + 's';
  }
  function breakerText(st) {
    var b = st.breaker;
    if (typeof b === 'string') return b;
    if (b && typeof b === 'object') {
      var reason = b.last_reason || b.reason;
      return (b.state || 'closed') + (reason ? ' (last: ' + reason + ')' : '');
    }
    if (st.api === 'up') return 'closed';
    if (st.api === 'down') return 'open or probing (' + (st.waiting_for_api || 0) + ' items wait for the API)';
    return null;
  }
  function cacheText(st) {
    if (typeof st.answer_hit_ratio === 'number')  // answer reuse: cached and joined answers
      return (st.answer_hit_ratio * 100).toFixed(1) + ' % (' + (st.answers_reused || 0) + ' cached, ' +
             (st.answers_joined || 0) + ' joined, ' + (st.api_calls || 0) + ' calls)';
    var c = st.answer_cache;
    if (!c || typeof c !== 'object') return null;
    if (typeof c.hit_ratio === 'number') return (c.hit_ratio * 100).toFixed(1) + ' %';
    if (typeof c.hits === 'number' && typeof c.misses === 'number') {
      var all = c.hits + c.misses;
      return all ? (100 * c.hits / all).toFixed(1) + ' % (' + c.hits + ' of ' + all + ')' : '-';
    }
    return null;
  }
  function renderFailures(reasons) {
    var box = $('failures');
    while (box.firstChild) box.removeChild(box.firstChild);
    if (!Array.isArray(reasons)) { box.appendChild(el('p', NA, 'na')); return; }
    if (!reasons.length) { box.appendChild(el('p', 'no failures', 'na')); return; }
    var table = el('table'), head = el('tr');
    ['reason', 'items', 'for example', ''].forEach(function (h) { head.appendChild(el('th', h)); });
    table.appendChild(head);
    reasons.forEach(function (f) {
      var tr = el('tr');
      tr.appendChild(el('td', f.reason));
      tr.appendChild(el('td', f.count, 'num'));
      tr.appendChild(el('td', (f.example_ids || []).join(', '), 'ids'));
      var td = el('td'), b = el('button', 'Retry these');
      b.type = 'button';
      b.className = 'retry';
      b.addEventListener('click', function () {
        if (!window.confirm('Put the ' + f.count + ' items that failed with "' + f.reason + '" back to pending?')) return;
        act('retry', 'retry', { reason_is: f.reason });
      });
      td.appendChild(b);
      tr.appendChild(td);
      table.appendChild(tr);
    });
    box.appendChild(table);
  }
  // An LLM API's tokens (http.tokens of /status, there once an answer carried usage or a token
  // limit is known): the run's total, its pace over the last polls against the limit, its cost.
  var tokenReadings = [];
  function renderTokens(tk) {
    if (!tk) {
      ['tokens', 'tokens_rate', 'api_cost'].forEach(function (id) { show(id, null); });
      return;
    }
    var all = tk.input + tk.output;
    show('tokens', all + ' (' + tk.input + ' input, ' + tk.output + ' output)');
    // The pace: tokens settled over the last ~15 s of polls (one poll apart says little).
    var now = Date.now();
    tokenReadings.push({ t: now, n: all });
    while (tokenReadings.length > 2 && now - tokenReadings[1].t >= 15000) tokenReadings.shift();
    var first = tokenReadings[0], seconds = (now - first.t) / 1000;
    var perMin = seconds >= 2 ? (all - first.n) / seconds * 60 : null;
    var limit = tk.limit_per_minute;
    show('tokens_rate', perMin === null ? (limit ? '? (limit ' + limit + '/min)' : null)
                                        : Math.round(perMin) + '/min' +
                                          (limit ? ' (' + (100 * perMin / limit).toFixed(1) + ' % of ' + limit + '/min)' : ''));
    show('api_cost', tk.cost === null || tk.cost === undefined ? null : String(tk.cost));
  }
  function renderStatus(st) {
    var state = st.finished ? 'finished' : st.paused ? 'paused' : 'running';
    var badge = $('state');
    badge.textContent = state;
    badge.className = 'badge ' + state;
    ['completed', 'no_data', 'failed', 'lost_leases', 'retries', 'in_flight', 'pending', 'leased', 'done', 'store_failed']
      .forEach(function (k) { show(k, st[k]); });
    if ('rate_per_second' in st) {
      var r = st.rate_per_second;
      show('rate_limit', r && r > 0 ? fixed(r, 2) + '/s (' + fixed(r * 60, 1) + '/min)' : 'no limit');
    } else show('rate_limit', null);
    show('percent_done', typeof st.percent_done === 'number' ? st.percent_done.toFixed(1) + ' %' : null);
    // No estimate while nothing finishes (paused, throttled, waiting for the API): '?'.
    show('eta', 'eta_s' in st ? (st.eta_s === null ? '?' : etaText(st.eta_s)) : null);
    show('throttled', st.http ? st.http.throttled : null);
    show('api_stops', st.http ? st.http.api_stops : null);
    show('breaker', breakerText(st));
    show('cache_ratio', cacheText(st));
    // Each call budget: what is left of it, and when it renews (or that it is spent).
    show('budget_left', st.budgets && st.budgets.length ? st.budgets.map(function (b) {
      return b.budget + ': ' + b.left + ' of ' + b.limit + (b.spent ? ' (spent' + (b.renews ? ', renews ' + b.renews : '') + ')' : '');
    }).join('; ') : null);
    renderTokens(st.http ? st.http.tokens : null);
    show('concurrency', 'concurrency' in st ? st.concurrency : null);
    // The adaptive limit of the first API origin (there is one per API origin).
    var lim = st.http && st.http.limits && st.http.limits.length ? st.http.limits[0] : null;
    show('api_limit', lim ? lim.limit + ' (' + lim.in_flight + ' in flight' +
                            (lim.stragglers ? ' + ' + lim.stragglers + ' slow' : '') + '; moved in ' + lim.lowest + '-' + lim.highest +
                            (lim.slow_start ? '; starting' : '') +
                            (lim.pace_per_s > 0 ? '; paced at ' + fixed(lim.pace_per_s, 0) + '/s' : '') + ')' : null);
    show('api_latency_now', lim && lim.recent_latency_ms > 0 ?
         fixed(lim.recent_latency_ms, 1) + ' ms (' + fixed(lim.min_latency_ms, 1) + ' ms)' : null);
    show('api_limit_reason', lim ? (lim.last_decrease || 'never lowered') : null);
    renderFailures(st.failure_reasons);
  }

  // ---- /workers ---------------------------------------------------------------------------
  // A holder's leases as /workers reads them: a live worker renews them (items it gave back for a
  // retry whose time has come are "retry due", not expired); a stale one renews nothing.
  function leaseState(s) {
    var ago = typeof s.renewed_s_ago === 'number' ? fixed(s.renewed_s_ago, 0) + ' s' : '?';
    if (s.state === 'live')
      return 'live, renewed ' + ago + ' ago' + (s.retry_due ? '; ' + s.retry_due + ' retry due' : '');
    return 'stale: ' + s.expired + ' expired, nothing renewed for ' + ago;
  }
  function renderWorkers(w) {
    var box = $('workers');
    while (box.firstChild) box.removeChild(box.firstChild);
    if (!w) { box.appendChild(el('p', NA, 'na')); return; }
    if (w.store_available === false) box.appendChild(el('p', 'the store\'s lease holders: ' + NA, 'na'));
    if (w.store_error) box.appendChild(el('p', 'the store: ' + w.store_error, 'na'));
    var rows = {};
    (w.store || []).forEach(function (s) {
      rows[s.by] = { by: s.by, leased: s.leased, state: leaseState(s), live: s.state === 'live',
                     here: s.this_process === true };
    });
    (w.this_process || []).forEach(function (p) {
      rows[p.by] = rows[p.by] || { by: p.by };
      rows[p.by].in_flight = p.in_flight;
      rows[p.by].here = true;
    });
    var names = Object.keys(rows).sort();
    if (!names.length) { box.appendChild(el('p', 'no worker holds anything', 'na')); return; }
    var table = el('table'), head = el('tr');
    ['worker', 'leased in the store', 'leases', 'in flight here', ''].forEach(function (h) { head.appendChild(el('th', h)); });
    table.appendChild(head);
    names.forEach(function (n) {
      var r = rows[n], tr = el('tr');
      tr.appendChild(el('td', n + (r.here ? ' (this process)' : '')));
      tr.appendChild(el('td', r.leased === undefined ? '-' : r.leased, 'num'));
      tr.appendChild(el('td', r.state || (r.here ? 'live' : '-')));
      tr.appendChild(el('td', r.in_flight === undefined ? '-' : r.in_flight, 'num'));
      var td = el('td'), b = el('button', 'Release');
      b.type = 'button';
      b.className = 'release';
      b.setAttribute('data-worker', n);
      b.addEventListener('click', function () {
        var warn = r.live || r.here ? n + ' is LIVE: it renews its leases. ' : '';
        if (!window.confirm(warn + 'Release every lease held by ' + n + '? Its items go back to pending; a worker still ' +
                            'running loses them (its writes are fenced off).')) return;
        act('release ' + n, 'release', { worker: n });
      });
      td.appendChild(b);
      tr.appendChild(td);
      table.appendChild(tr);
    });
    box.appendChild(table);
  }

  // ---- polling ----------------------------------------------------------------------------
  var polling = false;
  function poll() {
    if (polling) return Promise.resolve();
    polling = true;
    return Promise.all([
      getJSON('status').then(function (st) { if (st) renderStatus(st); }),
      getJSON('history').then(renderHistory),
      getJSON('workers').then(renderWorkers)
    ]).then(function () {
      $('updated').textContent = 'updated ' + new Date().toLocaleTimeString();
    }, function (err) {
      $('updated').textContent = 'cannot reach the controls: ' + err.message + ' (the run may have ended)';
    }).then(function () { polling = false; });
  }

  $('pause').addEventListener('click', function () { act('pause', 'pause'); });
  $('resume').addEventListener('click', function () { act('resume', 'resume'); });
  $('rate_set').addEventListener('click', function () {
    var v = $('rate_input').value.trim();
    if (!v) { message('type a rate such as 45/min or 10/s', true); return; }
    act('rate', 'rate', { rate: v });
  });
  $('rate_clear').addEventListener('click', function () { act('rate', 'rate', { rate: null }); });
  $('concurrency_set').addEventListener('click', function () {
    var n = parseInt($('concurrency_input').value, 10);
    if (!(n >= 1)) { message('concurrency: a whole number from 1', true); return; }
    act('concurrency', 'concurrency', { concurrency: n });
  });

  if (!token) message(readOnly);
  poll();
  setInterval(poll, 1500);
})();
