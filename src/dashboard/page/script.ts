/**
 * The dashboard's script (served as app.js): it follows the event stream, keeps the rows in a
 * Map, and draws only the rows in view (a virtualized list: a thousand servers cost what forty
 * do). Text from the agent is only ever set as textContent; the diagrams are the package's own SVG.
 */
export const PAGE_SCRIPT = String.raw`(function () {
  'use strict';
  var ROW = 30, CALLS = 200, OVERSCAN = 8;
  var rows = new Map(), selected = null, timeline = [], calls = [], diagrams = null, payloads = false;
  var callsSeen = 0, callsUnlisted = 0;
  var offset = 0, textFilter = '', stateFilter = null, frame = 0;
  var viewport = document.getElementById('viewport'), spacer = document.getElementById('spacer');
  var list = document.getElementById('rows'), detail = document.getElementById('detail');

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function now() { return Date.now() + offset; }
  function age(at) {
    if (!at) return '';
    var s = Math.max(0, Math.round((now() - at) / 1000));
    if (s < 60) return s + 's';
    if (s < 3600) return Math.floor(s / 60) + 'm' + (s % 60 ? ' ' + (s % 60) + 's' : '');
    return Math.floor(s / 3600) + 'h ' + Math.floor((s % 3600) / 60) + 'm';
  }
  function until(at) {
    if (!at) return '';
    var s = Math.round((at - now()) / 1000);
    return s <= 0 ? 'now' : 'in ' + s + 's';
  }
  function clock(at) { return new Date(at - offset).toLocaleTimeString(); }
  function nested(row) {
    var path = row.states && row.states.connection;
    return path && path !== row.state ? path.slice(row.state.length + 1) : '';
  }
  function children(row) {
    var out = [];
    for (var id in row.states || {}) if (id !== 'connection') out.push(id + ': ' + row.states[id]);
    return out.join(', ');
  }

  // ---- the list
  function matches(row) {
    if (stateFilter && row.state !== stateFilter) return false;
    if (!textFilter) return true;
    var text = [row.name, row.state, row.configured, row.transport, row.era, row.why, row.states && row.states.connection, children(row)].join(' ').toLowerCase();
    return text.indexOf(textFilter) !== -1;
  }
  var shown = [];
  function renderSummary() {
    var counts = {};
    rows.forEach(function (row) { counts[row.state] = (counts[row.state] || 0) + 1; });
    var nav = document.getElementById('summary');
    nav.textContent = '';
    var all = el('button', stateFilter ? '' : 'on', 'all ' + rows.size);
    all.onclick = function () { stateFilter = null; render(); };
    nav.appendChild(all);
    Object.keys(counts).sort().forEach(function (state) {
      var chip = el('button', 's-' + state + (stateFilter === state ? ' on' : ''), state + ' ' + counts[state]);
      chip.dataset.state = state;
      chip.onclick = function () { stateFilter = stateFilter === state ? null : state; render(); };
      nav.appendChild(chip);
    });
  }
  function cell(row, text, cls) { var span = el('span', cls, text); if (text) span.title = String(text); row.appendChild(span); return span; }
  function rowElement(data) {
    var row = el('div', 'row' + (data.name === selected ? ' selected' : ''));
    row.dataset.server = data.name;
    row.dataset.state = data.state;
    cell(row, data.name);
    cell(row, data.configured);
    var state = cell(row, '', 'state s-' + data.state);
    state.appendChild(document.createTextNode(data.state));
    var sub = [nested(data), children(data)].filter(Boolean).join(' · ');
    if (sub) state.appendChild(el('span', 'sub', ' ' + sub));
    state.title = (data.states && data.states.connection || data.state) + (children(data) ? ' · ' + children(data) : '');
    cell(row, [data.era, data.transport].filter(Boolean).join(' · '));
    cell(row, data.why ? data.why + (data.whyAt ? ' (' + age(data.whyAt) + ' ago)' : '') : '');
    cell(row, until(data.nextAttemptAt));
    cell(row, data.restarts);
    cell(row, data.rttMs === undefined || data.rttMs === null ? '' : Math.round(data.rttMs) + ' ms');
    cell(row, data.inFlight + ' · ' + data.held);
    cell(row, data.pid || '');
    row.onclick = function () { select(data.name); };
    return row;
  }
  function renderRows() {
    var first = Math.max(0, Math.floor(viewport.scrollTop / ROW) - OVERSCAN);
    var last = Math.min(shown.length, Math.ceil((viewport.scrollTop + viewport.clientHeight) / ROW) + OVERSCAN);
    list.style.transform = 'translateY(' + first * ROW + 'px)';
    var fragment = document.createDocumentFragment();
    for (var i = first; i < last; i++) fragment.appendChild(rowElement(rows.get(shown[i])));
    list.textContent = '';
    list.appendChild(fragment);
  }
  function render() {
    frame = 0;
    shown = [];
    rows.forEach(function (row) { if (matches(row)) shown.push(row.name); });
    shown.sort();
    spacer.style.height = shown.length * ROW + 'px';
    document.getElementById('count').textContent = shown.length + ' of ' + rows.size + ' servers';
    renderSummary();
    renderRows();
    renderDetail();
  }
  function schedule() { if (!frame) frame = requestAnimationFrame(render); }
  viewport.addEventListener('scroll', renderRows, { passive: true });
  window.addEventListener('resize', schedule);
  document.getElementById('filter').addEventListener('input', function (event) {
    textFilter = event.target.value.trim().toLowerCase();
    schedule();
  });

  // ---- the selected server
  function light(svg, path) {
    var boxes = svg.querySelectorAll('[data-state]');
    for (var i = 0; i < boxes.length; i++) {
      var state = boxes[i].getAttribute('data-state');
      var lit = !!path && (path === state || path.indexOf(state + '.') === 0);
      boxes[i].classList.toggle('lit', lit);
    }
  }
  // The current state and its exits, large; the whole machine (every state, every edge) on demand.
  function exits(svg, path) {
    var found = [];
    var edges = svg.querySelectorAll('path.edge[data-from]');
    for (var i = 0; i < edges.length; i++) {
      var from = edges[i].getAttribute('data-from');
      if (path && (path === from || path.indexOf(from + '.') === 0))
        found.push({ events: edges[i].getAttribute('data-events'), to: edges[i].getAttribute('data-to') });
    }
    var anywhere = svg.querySelectorAll('desc.anywhere');
    for (var j = 0; j < anywhere.length; j++)
      found.push({ events: anywhere[j].getAttribute('data-events') + ' (any state)', to: anywhere[j].getAttribute('data-to') });
    return found;
  }
  function diagram(container, machine, title, path) {
    if (!diagrams || !diagrams[machine]) return;
    var box = container.querySelector('[data-diagram="' + machine + '"]');
    if (!box) {
      box = el('div', 'diagram');
      box.dataset.diagram = machine;
      box.appendChild(el('h3', '', title));
      box.appendChild(el('div', 'focus'));
      var whole = el('details', 'whole');
      whole.appendChild(el('summary', '', 'the whole machine'));
      var holder = el('div');
      holder.innerHTML = diagrams[machine];
      whole.appendChild(holder);
      box.appendChild(whole);
      container.appendChild(box);
    }
    box.querySelector('h3').textContent = title;
    var svg = box.querySelector('svg');
    light(svg, path);
    var focus = el('div', 'focus');
    focus.appendChild(el('div', 'now', path || '-'));
    var list = el('ul', 'exits');
    exits(svg, path).forEach(function (exit) {
      var item = el('li');
      item.appendChild(el('span', 'event', exit.events));
      item.appendChild(el('span', 'arrow', '→'));
      item.appendChild(el('span', 'target', exit.to));
      list.appendChild(item);
    });
    if (!list.firstChild) list.appendChild(el('li', 'muted', 'no way out but stop'));
    focus.appendChild(list);
    box.replaceChild(focus, box.querySelector('.focus'));
  }
  function field(list, name, value) {
    if (value === undefined || value === null || value === '') return;
    list.appendChild(el('dt', '', name));
    list.appendChild(el('dd', '', value));
  }
  function act(action) {
    var note = detail.querySelector('.note');
    fetch('api/servers/' + encodeURIComponent(selected) + '/' + action, { method: 'POST' })
      .then(function (response) { return response.json(); })
      .then(function (result) { if (note) note.textContent = result.ok ? action + ' requested' : result.error; })
      .catch(function (error) { if (note) note.textContent = String(error); });
  }
  var drawn = null;
  function renderDetail() {
    var row = selected && rows.get(selected);
    if (!row) return;
    if (drawn !== selected) {
      detail.textContent = '';
      var title = el('h2');
      title.appendChild(el('span', '', row.name));
      title.appendChild(el('span', 'state', ''));
      detail.appendChild(title);
      var actions = el('div', 'actions');
      ['reconnect', 'enable', 'disable'].forEach(function (action) {
        var button = el('button', '', action);
        button.dataset.action = action;
        button.onclick = function () { act(action); };
        actions.appendChild(button);
      });
      actions.appendChild(el('span', 'note muted'));
      detail.appendChild(actions);
      detail.appendChild(el('dl'));
      detail.appendChild(el('div', 'stderr'));
      detail.appendChild(el('div', 'diagrams'));
      detail.appendChild(el('h2', '', 'Timeline'));
      detail.appendChild(el('ol', 'timeline'));
      drawn = selected;
    }
    var state = detail.querySelector('h2 .state');
    state.className = 'state s-' + row.state;
    state.textContent = row.states && row.states.connection || row.state;
    detail.querySelector('[data-action=reconnect]').disabled = row.configured === 'disabled';
    detail.querySelector('[data-action=enable]').disabled = row.configured === 'enabled';
    detail.querySelector('[data-action=disable]').disabled = row.configured === 'disabled';
    var fields = el('dl');
    field(fields, 'configured', row.configured);
    field(fields, 'state', (row.states && row.states.connection || row.state) + (row.since ? ' for ' + age(row.since) : ''));
    field(fields, 'children', children(row));
    field(fields, 'era', row.era);
    field(fields, 'transport', row.transport);
    field(fields, 'protocol', row.protocolVersion);
    field(fields, 'server', row.serverInfo);
    field(fields, 'why', row.why ? row.why + (row.whyAt ? ' (' + age(row.whyAt) + ' ago)' : '') : '');
    field(fields, 'next attempt', row.nextAttemptAt ? until(row.nextAttemptAt) + ' (' + clock(row.nextAttemptAt) + ')' : '');
    field(fields, 'restarts', row.restarts);
    field(fields, 'keepalive', row.rttMs === undefined || row.rttMs === null ? (row.missed ? row.missed + ' missed' : '') : Math.round(row.rttMs) + ' ms, ' + row.missed + ' missed');
    field(fields, 'requests', row.inFlight + ' in flight, ' + row.held + ' held');
    field(fields, 'pid', row.pid);
    detail.replaceChild(fields, detail.querySelector('dl'));
    var stderr = detail.querySelector('.stderr');
    stderr.textContent = '';
    if (row.stderr && row.stderr.length) {
      stderr.appendChild(el('h3', 'muted', 'stderr'));
      stderr.appendChild(el('pre', '', row.stderr.join('\n')));
    }
    var holder = detail.querySelector('.diagrams');
    diagram(holder, 'connection', 'connection', row.states ? row.states.connection : row.state);
    ['keepalive', 'listener', 'sse-fallback'].forEach(function (child) {
      var path = row.states && row.states[child];
      var existing = holder.querySelector('[data-diagram="' + child + '"]');
      if (path) diagram(holder, child, child, path);
      else if (existing) existing.remove();
    });
  }
  function renderTimeline() {
    var list = detail.querySelector('ol.timeline');
    if (!list) return;
    list.textContent = '';
    for (var i = timeline.length - 1; i >= 0; i--) {
      var entry = timeline[i];
      var item = el('li');
      item.appendChild(el('span', 'muted', clock(entry.at) + '  '));
      item.appendChild(el('span', 's-' + (entry.from || ''), entry.from || 'start'));
      item.appendChild(document.createTextNode(' → '));
      item.appendChild(el('span', 'state s-' + entry.to, entry.to));
      item.appendChild(document.createTextNode(' — ' + entry.cause));
      if (entry.error) item.appendChild(el('div', 'err', entry.error));
      list.appendChild(item);
    }
  }
  function select(name) {
    selected = name;
    drawn = null;
    timeline = [];
    render();
    renderTimeline();
    fetch('api/servers/' + encodeURIComponent(name))
      .then(function (response) { return response.json(); })
      .then(function (data) {
        if (selected !== name || !data.row) return;
        timeline = data.timeline;
        rows.set(name, data.row);
        schedule();
        renderTimeline();
      });
  }

  // ---- the activity log
  function renderCalls() {
    var box = document.getElementById('calls');
    box.textContent = '';
    for (var i = calls.length - 1; i >= 0; i--) {
      var call = calls[i];
      var line = el('div', 'call ' + call.outcome);
      line.appendChild(el('span', 'muted', clock(call.at)));
      line.appendChild(el('span', '', call.server));
      line.appendChild(el('span', '', call.method));
      line.appendChild(el('span', '', call.tool || ''));
      line.appendChild(el('span', '', call.durationMs + ' ms'));
      line.appendChild(el('span', 'outcome', call.outcome));
      line.appendChild(el('span', '', call.sends > 1 ? 'sent ' + call.sends + '×' : ''));
      line.appendChild(el('span', '', call.error || ''));
      if (payloads && (call.args || call.result)) line.appendChild(el('span', 'payload', 'args ' + (call.args || '') + '\nresult ' + (call.result || '')));
      box.appendChild(line);
    }
    var note = payloads ? '(arguments and results shown)' : '(arguments and results hidden)';
    if (callsSeen) note += ' · ' + callsSeen + ' calls since the page opened' + (callsUnlisted ? ', ' + callsUnlisted + ' not listed (too many to show)' : '');
    document.getElementById('calls-note').textContent = note;
  }

  // ---- the stream
  function live(text, cls) {
    var badge = document.getElementById('live');
    badge.textContent = text;
    badge.className = 'live ' + cls;
  }
  function start() {
    var stream = new EventSource('events');
    stream.addEventListener('snapshot', function (event) {
      var data = JSON.parse(event.data);
      offset = data.now - Date.now();
      rows = new Map();
      data.rows.forEach(function (row) { rows.set(row.name, row); });
      calls = data.calls;
      payloads = data.payloads;
      live('live', 'on');
      render();
      renderCalls();
    });
    stream.addEventListener('rows', function (event) {
      var data = JSON.parse(event.data);
      data.rows.forEach(function (row) { rows.set(row.name, row); });
      data.removed.forEach(function (name) { rows.delete(name); });
      schedule();
    });
    stream.addEventListener('transitions', function (event) {
      var mine = JSON.parse(event.data).transitions.filter(function (entry) { return entry.server === selected; });
      if (!mine.length) return;
      timeline = timeline.concat(mine).slice(-50);
      renderTimeline();
    });
    stream.addEventListener('calls', function (event) {
      var data = JSON.parse(event.data);
      calls = calls.concat(data.calls).slice(-CALLS);
      callsSeen += data.calls.length + data.dropped;
      callsUnlisted += data.dropped;
      renderCalls();
    });
    stream.addEventListener('resync', function () { live('live (caught up)', 'on'); });
    stream.onopen = function () { live('live', 'on'); };
    stream.onerror = function () { live(stream.readyState === 2 ? 'disconnected' : 'reconnecting…', 'off'); };
  }
  fetch('machines.json')
    .then(function (response) { return response.json(); })
    .then(function (data) { diagrams = data; schedule(); });
  setInterval(function () { if (rows.size) { renderRows(); renderDetail(); } }, 1000);
  start();
})();
`;
