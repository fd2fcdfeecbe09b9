// Partita dashboard: plain JS, no build step. Data comes from /dashboard/api/*.json and a
// server-sent event stream (/dashboard/api/events, read with fetch so the API key travels in a
// header, never in a URL). Every plot is drawn with uPlot and has its numbers in a table too.
(function () {
  'use strict';
  const API = '/dashboard/api/';
  const KEY = 'partita.apiKey';
  const COLORS = ['#2456c9', '#d9480f', '#2b8a3e', '#862e9c', '#c2255c', '#0b7285', '#e67700', '#5c940d', '#364fc7', '#a61e4d'];
  const data = {};
  const plots = [];
  let current = null;
  let stream = null;

  // ---- small DOM helpers (text only: nothing from the server is parsed as HTML) ----
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : v);
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }
  function fmt(v, digits) {
    if (v === null || v === undefined) return '–';
    if (typeof v !== 'number') return String(v);
    const d = digits === undefined ? (Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2) : digits;
    return v.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: 0 });
  }
  function bytes(v) {
    if (v === null || v === undefined) return '–';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return fmt(v, 1) + ' ' + units[i];
  }
  function table(caption, headers, rows, attrs) {
    return el('table', attrs || {},
      caption ? el('caption', { text: caption }) : null,
      el('thead', {}, el('tr', {}, headers.map(h => el('th', { scope: 'col', class: h.num ? 'num' : null, text: h.label || h })))),
      el('tbody', {}, rows.map(r => el('tr', r.attrs || {}, r.cells.map((c, i) =>
        el('td', { class: headers[i] && headers[i].num ? 'num' : null, 'data-field': headers[i] && headers[i].field }, c))))));
  }
  function empty(text) { return el('p', { class: 'empty', text }); }
  function headers() {
    const key = sessionStorage.getItem(KEY);
    return key ? { Authorization: 'Bearer ' + key } : {};
  }
  function setStatus(text) { document.getElementById('status').textContent = text; }

  // ---- views: the URL's fragment names the one shown (#plan) ----
  // The view links change the fragment, which adds a history entry: back and forward move between
  // views, and a copied link opens the same view. An unknown fragment shows the overview.
  const VIEWS = [...document.querySelectorAll('#tabs a[data-view]')].map(a => a.dataset.view);
  const TITLE = document.title;
  function viewFromLocation() {
    const wanted = location.hash.slice(1);
    if (VIEWS.includes(wanted)) return wanted;
    history.replaceState(null, '', location.pathname + location.search + '#overview');
    return 'overview';
  }
  function showView(name) {
    current = name;
    let label = name;
    document.querySelectorAll('#tabs a[data-view]').forEach(a => {
      if (a.dataset.view === name) { a.setAttribute('aria-current', 'page'); label = a.textContent; } else a.removeAttribute('aria-current');
    });
    document.querySelectorAll('main > section').forEach(s => { s.hidden = s.dataset.view !== name; });
    document.title = label + ' · ' + TITLE;
    render(name);
  }
  function render(name) {
    if (name !== current || name === 'whatif') return;
    const body = document.querySelector('#view-' + name + ' .body');
    const d = data[name];
    if (!d) { body.replaceChildren(empty('Waiting for data…')); return; }
    const renderers = { overview: renderOverview, hosts: renderHosts, timings: renderTimings, plan: renderPlan, traffic: renderTraffic, jobs: renderJobs, deadletters: renderDeadLetters };
    const focused = document.activeElement && body.contains(document.activeElement) ? document.activeElement.id : null;
    destroyPlots(name);
    body.replaceChildren(renderers[name](d));
    if (focused && document.getElementById(focused)) document.getElementById(focused).focus();
  }
  function destroyPlots(view) {
    for (let i = plots.length - 1; i >= 0; i--) {
      if (plots[i].view === view) { plots[i].plot.destroy(); plots.splice(i, 1); }
    }
  }
  function plot(view, target, opts, series) {
    const p = new uPlot(opts, series, target);
    plots.push({ view, plot: p });
    return p;
  }

  // ---- overview: one row per model, a line of health figures above ----
  const STATES = { READY: ['ready', 'Ready'], PARTLY_READY: ['partly', 'Partly ready'], NOT_READY: ['not-ready', 'Not ready'] };
  function plural(n, one, many) { return `${fmt(n, 0)} ${n === 1 ? one : many}`; }
  function ms(v) { return v === null || v === undefined ? 'no calls' : fmt(v, v >= 100 ? 0 : 1) + ' ms'; }
  function minutes(seconds) { return seconds % 60 === 0 ? plural(seconds / 60, 'minute', 'minutes') : plural(seconds, 'second', 'seconds'); }

  function renderOverview(d) {
    const s = d.summary;
    const w = d.windowSeconds;
    const notReady = d.models.filter(m => m.state === 'NOT_READY');
    const partly = d.models.filter(m => m.state === 'PARTLY_READY');
    let headline;
    if (!d.models.length) {
      headline = el('p', { class: 'headline', id: 'overview-headline', text: 'No models yet: this gateway offers none and the planner has published no route.' });
    } else if (!notReady.length && !partly.length) {
      headline = el('p', { class: 'headline good', id: 'overview-headline', text: d.models.length === 1 ? 'The model is ready to answer.' : `All ${d.models.length} models are ready to answer.` });
    } else {
      const parts = [];
      if (notReady.length) parts.push(`${notReady.length} of ${d.models.length} not ready (${notReady.map(m => m.model).join(', ')})`);
      if (partly.length) parts.push(`${partly.length} partly ready (${partly.map(m => m.model).join(', ')})`);
      headline = el('p', { class: 'headline ' + (notReady.length ? 'poor' : 'fair'), id: 'overview-headline', text: 'Models: ' + parts.join(', ') + '. The reasons are in the table.' });
    }
    const letters = s.deadLetters;
    const tiles = [
      ['models', 'Models ready', `${s.modelsReady} of ${s.models}`, '', s.modelsReady < s.models],
      ['hosts', 'Hosts', fmt(s.hosts, 0), s.hostsLeft.length ? `${s.hostsLeft.join(', ')} left the worker group` : 'machines running workers', s.hostsLeft.length > 0],
      ['slots', 'Slots ready', `${s.slotsReady} of ${s.slots}`, 'model sessions serving', s.slotsReady < s.slots],
      ['requests', 'Requests', `${fmt(s.requestsPerSecond)} /s`, `${fmt(s.errorsPerSecond)} errors/s, this gateway, last ${w} s`, s.errorsPerSecond > 0],
      ['jobs', 'Jobs running', fmt(s.jobsRunning, 0), `${fmt(s.jobsQueued, 0)} queued`, false],
      ['deadletters', 'Dead letters', letters ? (letters.atLeast ? 'at least ' : '') + fmt(letters.count, 0) : '–',
        letters ? 'last ' + minutes(letters.windowSeconds) : 'not shown to this key', letters ? letters.count > 0 : false]
    ];
    const summary = el('dl', { class: 'summary', 'aria-label': 'Health summary' }, tiles.map(([field, label, value, hint, warn]) =>
      el('div', { class: 'tile' + (warn ? ' warn' : ''), 'data-field': field },
        el('dt', { text: label }), el('dd', {}, el('span', { class: 'value', text: value }), hint ? el('span', { class: 'sub', text: hint }) : null))));
    if (!d.models.length) return el('div', {}, headline, summary);
    const rows = d.models.map(m => {
      const [cls, word] = STATES[m.state] || ['not-ready', m.state];
      const where = m.where.length ? el('ul', { class: 'where' }, m.where.map(h => el('li', {},
        el('strong', { text: h.host }),
        `: ${h.versions.length ? 'version ' + h.versions.join(', ') : 'version not known'} on ${h.slots.length === 1 ? 'slot' : 'slots'} ${h.slots.join(', ')}`,
        h.readyInstances < h.instances ? ` (${h.readyInstances} of ${h.instances} ready)` : '',
        h.hostLeft ? el('span', { class: 'bad', text: ' — host left' }) : null)))
        : el('span', { class: 'muted', text: 'nowhere yet' });
      return { attrs: { 'data-model': m.model, 'data-state': m.state }, cells: [
        el('div', {}, el('strong', { text: m.model }), m.baseModel && m.baseModel !== m.model ? el('span', { class: 'sub', text: 'on base model ' + m.baseModel }) : null),
        el('div', {}, el('span', { class: 'badge ' + cls, text: word }), ' ',
          el('span', { text: m.plannedInstances ? `${m.readyInstances} of ${plural(m.plannedInstances, 'instance', 'instances')} ready` : 'no instance planned' }),
          m.reason ? el('span', { class: 'why', text: (m.state === 'READY' ? 'Note: ' : 'Why: ') + m.reason }) : null),
        fmt(m.rate) + ' /s',
        el('span', { class: m.errorsInWindow > 0 ? 'bad' : null, text: fmt(m.errorsInWindow, 0) }),
        ms(m.p50Ms), ms(m.p99Ms), where] };
    });
    return el('div', {}, headline, summary,
      table(`Models: readiness, calls through this gateway over the last ${w} s, and where they run`,
        ['Model', { label: 'Ready to answer?', field: 'ready' }, { label: 'Requests', num: true, field: 'rate' }, { label: `Errors (last ${w} s)`, num: true, field: 'errors' },
          { label: 'Latency p50', num: true, field: 'p50' }, { label: 'Latency p99', num: true, field: 'p99' }, { label: 'Runs on (host: version, slots)', field: 'where' }],
        rows, { id: 'overview-table', class: 'overview' }),
      el('p', { class: 'hint', text: 'Latencies are rounded up to the gateway\'s histogram buckets (about 1.4× apart); only calls through this gateway are counted.' }));
  }

  function renderHosts(d) {
    if (!d.hosts.length) return empty('No host has reported its environment yet (the profiler writes hosts.environments).');
    return el('div', { class: 'cards' }, d.hosts.map(h => el('article', { class: 'card', 'data-host': h.host },
      el('h3', { text: h.host }),
      el('dl', {},
        el('dt', { text: 'CPU' }), el('dd', { text: h.cpuModel }),
        el('dt', { text: 'Cores' }), el('dd', { text: `${h.usableCores} usable of ${h.logicalCores} logical (${h.physicalCores} physical)` + (h.cpuQuotaCores ? `, quota ${fmt(h.cpuQuotaCores)}` : '') }),
        el('dt', { text: 'Memory' }), el('dd', { text: bytes(h.memoryBytes) + (h.memoryLimitBytes ? ' (limit ' + bytes(h.memoryLimitBytes) + ')' : '') }),
        el('dt', { text: 'GPUs' }), el('dd', { text: h.gpus.length ? h.gpus.map(g => `${g.index}: ${g.name} ${bytes(g.memoryBytes)} (cc ${g.computeCapability})`).join('; ') : 'none' }),
        el('dt', { text: 'Providers' }), el('dd', { text: h.providers.join(', ') }),
        el('dt', { text: 'ONNX Runtime' }), el('dd', { text: h.onnxRuntime }),
        el('dt', { text: 'OS' }), el('dd', { text: h.os }),
        el('dt', { text: 'Java' }), el('dd', { text: h.java }),
        el('dt', { text: 'Baseline' }), el('dd', { text: h.baseline ? `${fmt(h.baseline.throughput)} inferences/s on ${h.baseline.referenceModel} (${h.baseline.threads} threads, batch ${h.baseline.batch}; ${h.baseline.pointsMeasured} of ${h.baseline.gridSize} points)` : 'not measured' }),
        el('dt', { text: 'Reported' }), el('dd', { text: h.updated })))));
  }

  function renderTimings(d) {
    if (!d.models.length) return empty('No timings yet: the profiler writes them to profile.timings.');
    const width = Math.min(560, Math.max(320, (document.querySelector('main').clientWidth - 80) / 2));
    return el('div', {}, d.models.map(m => {
      const batches = [...new Set(m.series.flatMap(s => s.points.map(p => p.batch)))].sort((a, b) => a - b);
      const at = (s, b, f) => { const p = s.points.find(q => q.batch === b); return p ? p[f] : null; };
      const latSeries = [{ label: 'batch' }];
      const latData = [batches];
      const thrSeries = [{ label: 'batch' }];
      const thrData = [batches];
      m.series.forEach((s, i) => {
        const color = COLORS[i % COLORS.length];
        latSeries.push({ label: s.label + ' p50', stroke: color, width: 2, points: { show: true } });
        latData.push(batches.map(b => at(s, b, 'p50Ms')));
        latSeries.push({ label: s.label + ' p99', stroke: color, width: 1.5, dash: [6, 4], points: { show: true } });
        latData.push(batches.map(b => at(s, b, 'p99Ms')));
        thrSeries.push({ label: s.label, stroke: color, width: 2, points: { show: true } });
        thrData.push(batches.map(b => at(s, b, 'throughput')));
      });
      const x = { time: false, distr: batches.length > 1 && batches[0] > 0 ? 3 : 1, log: 2 };
      const axes = unit => [{ label: 'batch size', values: (u, vals) => vals.map(v => String(v)) }, { label: unit, size: 70 }];
      const points = m.series.reduce((n, s) => n + s.points.length, 0);
      const lat = el('div', { role: 'img', 'aria-label': `Latency of ${m.model} version ${m.version} against batch size; the numbers are in the table beside it` });
      const thr = el('div', { role: 'img', 'aria-label': `Throughput of ${m.model} version ${m.version} against batch size; the numbers are in the table beside it` });
      const rows = [];
      m.series.forEach(s => s.points.forEach(p => rows.push({ cells: [s.label, p.batch, fmt(p.p50Ms, 3), fmt(p.p99Ms, 3), fmt(p.throughput, 1), p.samples] })));
      const fig = el('figure', { class: 'timing', 'data-model': m.model, 'data-version': m.version, 'data-points': points },
        el('h3', { text: `${m.model} · version ${m.version}` }),
        el('div', { class: 'plots' }, lat, thr),
        el('div', { class: 'table-wrap' }, table(`${m.model} v${m.version}: ${points} measured points`,
          ['Partition', { label: 'Batch', num: true }, { label: 'p50 ms', num: true }, { label: 'p99 ms', num: true }, { label: 'Inferences/s', num: true }, { label: 'Samples', num: true }], rows)));
      requestAnimationFrame(() => {
        plot('timings', lat, { width, height: 200, title: 'Latency (ms) by batch size', legend: { live: false }, scales: { x, y: { range: (u, min, max) => [0, max * 1.05 || 1] } }, series: latSeries, axes: axes('ms') }, latData);
        plot('timings', thr, { width, height: 200, title: 'Throughput (inferences/s) by batch size', legend: { live: false }, scales: { x, y: { range: (u, min, max) => [0, max * 1.05 || 1] } }, series: thrSeries, axes: axes('inferences/s') }, thrData);
      });
      return fig;
    }));
  }

  function modelColor(model) {
    let h = 0;
    for (const c of model) h = (h * 31 + c.charCodeAt(0)) >>> 0;
    return COLORS[h % COLORS.length];
  }

  function renderPlanHosts(d, prefix) {
    if (!d.hosts.length) return empty('No plan yet: the planner writes plan.* once it has environments and timings.');
    return el('div', {}, d.hosts.map(h => el('article', { class: 'host', 'data-host': h.host },
      el('h3', { text: 'Host ' + h.host }),
      h.pools.length ? h.pools.map(p => {
        const used = p.slots.reduce((n, s) => n + s.width, 0);
        const segs = p.slots.map(s => el('div', {
          class: 'seg', 'data-slot': s.slot, style: `flex: ${s.width}; background: ${modelColor(s.model + '/' + s.version)}`,
          title: `${s.slot}: ${s.model} v${s.version}, ${s.instances.length} instance(s)` },
          el('strong', { text: s.slot }),
          `${s.model} v${s.version}`, el('br'),
          s.cpus.length ? `cpus ${s.cpus.join(',')}` : `gpu ${s.gpu}`, ' · ', `${s.instances.length} inst.`));
        if (p.size > used) segs.push(el('div', { class: 'seg free', style: `flex: ${p.size - used}` }, el('strong', { text: 'unassigned' }), `${p.size - used} of ${p.size}`));
        return el('div', { class: 'pool', 'data-pool': p.pool },
          el('p', { text: `Pool ${p.pool}: ${p.size} resource(s), ${p.slots.length} slot(s)` }),
          el('div', { class: 'bar', role: 'img', 'aria-label': `Pool ${p.pool} of host ${h.host} cut into ${p.slots.length} slots; listed in the table below` }, segs),
          table(`Slots of pool ${p.pool}`, ['Slot', 'Resources', 'Model', 'Version', 'Provider', { label: 'Threads', num: true }, { label: 'Max batch', num: true }, 'Instances (service model: weight file)'],
            p.slots.map(s => ({ attrs: { 'data-slot': s.slot }, cells: [s.slot, s.cpus.length ? 'cpus ' + s.cpus.join(',') : 'gpu ' + s.gpu, s.model, s.version, s.provider, s.threads, s.maxBatch,
              el('ul', {}, s.instances.map(i => el('li', { text: `${i.instanceId} (${i.serviceModel}): ${i.weightFile || 'base weights'}` })))] }))));
      }) : empty('No slots assigned on this host.'),
      el('div', { class: 'tables' },
        h.partitions.length ? table('Partition plans: predicted against measured throughput',
          ['Model', 'Version', 'Pool', 'Sizes', { label: 'Batch', num: true }, { label: 'Predicted /s', num: true }, { label: 'Measured /s', num: true }, { label: 'Max latency ms', num: true }, 'Rests on', 'Method', 'Why'],
          h.partitions.map(p => ({ cells: [p.model, p.version, p.pool, p.sizes.join('+') || '–', p.batch, fmt(p.predictedThroughput, 1), fmt(p.measuredThroughput, 1), fmt(p.maxLatencyMs, 3), p.planned ? p.basis : '–', p.method, p.noEligibleReason || p.why || (p.planned ? 'planned' : 'not planned')] }))) : null,
        h.versions.length ? table('Version chosen for this host, and why',
          ['Model', 'Chosen', 'Why', 'Candidates'],
          h.versions.map(v => ({ cells: [v.model, v.chosenVersion || 'none', v.why || '–',
            el('ul', {}, v.candidates.map(c => el('li', { text: `${c.version}: ${c.status}` + (c.latencyMs !== null ? `, ${fmt(c.latencyMs, 3)} ms` : '') + (c.predicted ? ` (predicted from ${c.sourceHost})` : ' (measured)') + (c.reason ? ` — ${c.reason}` : '') })))] }))) : null))));
  }
  function renderPlan(d) { return renderPlanHosts(d, ''); }

  function renderTraffic(d) {
    if (!d.models.length) return empty('No service model is visible with this key.');
    const rows = d.models.map(m => {
      const spark = el('div', { class: 'spark', role: 'img', 'aria-label': `Requests per second of ${m.model}, last ${m.history.length} s; numbers in the table below the row` });
      if (m.history.length > 1) {
        requestAnimationFrame(() => plot('traffic', spark, {
          width: 180, height: 40, legend: { show: false }, cursor: { show: false },
          axes: [{ show: false }, { show: false }], scales: { x: { time: false }, y: { range: (u, min, max) => [0, Math.max(1, max)] } },
          series: [{}, { stroke: '#2456c9', width: 1.5, fill: 'rgba(36,86,201,.12)' }]
        }, [m.history.map(h => h[0]), m.history.map(h => h[1])]));
      }
      const hist = el('details', {}, el('summary', { text: 'numbers' }),
        table(null, ['Time', { label: 'req/s', num: true }, { label: 'errors/s', num: true }],
          m.history.slice(-30).map(h => ({ cells: [new Date(h[0] * 1000).toLocaleTimeString(), fmt(h[1]), fmt(h[2])] }))));
      return { attrs: { 'data-model': m.model }, cells: [
        m.model,
        el('span', { class: m.readyInstances > 0 ? 'ok' : 'bad', text: `${m.readyInstances} of ${m.instances.length}` }),
        fmt(m.rate), fmt(m.p50Ms, 1), fmt(m.p99Ms, 1), String(m.requests), String(m.errors), fmt(m.errorRate),
        m.lag === null ? '–' : String(m.lag), String(m.inFlight), String(m.queueDepth),
        el('div', {}, spark, hist)] };
    });
    const instances = d.models.flatMap(m => m.instances.map(i => ({ cells: [m.model, i.instanceId, i.host, i.slot,
      el('span', { class: i.ready ? 'ok' : 'bad', text: i.ready ? 'ready' : 'not ready' }), i.reason || '', String(i.inFlight), String(i.queueDepth)] })));
    return el('div', {},
      table(`This gateway's infer calls over the last ${d.windowSeconds} s (percentiles are histogram bucket bounds)`,
        ['Service model', 'Ready instances', { label: 'req/s', num: true, field: 'rate' }, { label: 'p50 ms', num: true, field: 'p50' }, { label: 'p99 ms', num: true, field: 'p99' },
          { label: 'Requests', num: true, field: 'requests' }, { label: 'Errors', num: true, field: 'errors' }, { label: 'errors/s', num: true }, { label: 'Lag', num: true, field: 'lag' },
          { label: 'In flight', num: true, field: 'inflight' }, { label: 'Queued', num: true }, 'Last minutes'], rows, { id: 'traffic-table' }),
      el('h3', { text: 'Route instances' }),
      instances.length ? table(null, ['Service model', 'Instance', 'Host', 'Slot', 'State', 'Why not ready', { label: 'In flight', num: true }, { label: 'Queued', num: true }], instances) : empty('No routes yet.'));
  }

  function renderJobs(d) {
    if (!d.jobs.length) return empty('No batch jobs (submit one with POST /v2/jobs?model=…).');
    return table(null, ['Job', 'Model', 'State', 'Progress', { label: 'Done', num: true }, { label: 'Failed', num: true }, { label: 'Rate /s', num: true }, { label: 'ETA', num: true }, 'Created', 'Action'],
      d.jobs.map(j => ({ attrs: { 'data-job': j.id }, cells: [
        j.id, j.model, j.state,
        el('span', {}, el('progress', { max: 100, value: j.percent, 'aria-label': `Progress of job ${j.id}` }), ' ', el('span', { class: 'percent', text: fmt(j.percent, 1) + '%' })),
        `${j.done} / ${j.total}`, String(j.failed), fmt(j.rate, 1), j.etaSeconds === null ? '–' : j.etaSeconds + ' s', j.created,
        j.final ? '' : el('button', { type: 'button', id: 'cancel-' + j.id, onclick: () => cancelJob(j.id), text: 'Cancel', 'aria-label': `Cancel job ${j.id}` })] })));
  }

  async function cancelJob(id) {
    if (!confirm('Cancel job ' + id + '?')) return;
    const r = await fetch('/v2/jobs/' + encodeURIComponent(id), { method: 'DELETE', headers: headers() });
    const body = await r.json().catch(() => ({}));
    setStatus(r.ok ? `Job ${id} cancelled` : `Cancel failed: ${body.error || r.status}`);
  }

  function renderDeadLetters(d) {
    if (!d.visible) return empty('Dead letters can carry any model\'s data; only a key that may use every service model sees them.');
    if (!d.deadLetters.length) return empty('No dead letters.');
    return table(`The last ${d.deadLetters.length} dead letters, newest first`, ['At', 'Topic', { label: 'Partition', num: true }, { label: 'Offset', num: true }, 'Reason', 'Error', 'Component'],
      d.deadLetters.map(l => ({ cells: [l.at, l.topic, String(l.partition), String(l.offset), l.reason, l.errorClass, l.component] })));
  }

  // ---- what-if ----
  function setupWhatIf() {
    document.getElementById('whatif-file').addEventListener('change', async e => {
      const f = e.target.files[0];
      if (f) document.getElementById('whatif-text').value = await f.text();
    });
    document.getElementById('whatif-form').addEventListener('submit', async e => {
      e.preventDefault();
      const status = document.getElementById('whatif-status');
      const out = document.querySelector('#view-whatif .body');
      status.textContent = 'Replaying the recorded topics with this inventory…';
      const r = await fetch(API + 'whatif', { method: 'POST', headers: Object.assign({ 'Content-Type': 'application/yaml' }, headers()), body: document.getElementById('whatif-text').value });
      const body = await r.json().catch(() => ({ error: 'HTTP ' + r.status }));
      if (!r.ok) { status.textContent = 'Not planned: ' + (body.error || r.status); out.replaceChildren(); return; }
      status.textContent = 'Planned.';
      out.replaceChildren(
        el('div', { id: 'whatif-plan' }, el('h3', { text: 'With the inventory' }), renderPlanHosts(body.whatIf, 'w')),
        el('div', { id: 'whatif-live' }, el('h3', { text: 'Live plan' }), renderPlanHosts(body.live, 'l')));
    });
  }

  // ---- data: first the JSON endpoints, then the live stream ----
  async function session() {
    const r = await fetch(API + 'session.json', { headers: headers() });
    const body = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(body.error || 'HTTP ' + r.status);
    if (!body.authorized) { askKey(body.error); return null; }
    return body;
  }
  function askKey(message) {
    document.getElementById('key-form').hidden = false;
    document.getElementById('views').hidden = true;
    document.getElementById('key-error').textContent = sessionStorage.getItem(KEY) ? (message || 'That key was refused.') : '';
    setStatus('An API key is needed');
    document.getElementById('api-key').focus();
  }
  async function loadAll(names) {
    await Promise.all(names.map(async n => {
      const r = await fetch(API + n + '.json', { headers: headers() });
      if (r.ok) { data[n] = await r.json(); render(n); }
    }));
  }
  async function listen() {
    if (stream) stream.abort();
    stream = new AbortController();
    try {
      const r = await fetch(API + 'events', { headers: headers(), signal: stream.signal });
      if (!r.ok) { setStatus('Live updates refused: HTTP ' + r.status); return; }
      setStatus('Live');
      const reader = r.body.getReader();
      const decoder = new TextDecoder();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let i;
        while ((i = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, i);
          buffer = buffer.slice(i + 2);
          let event = 'message';
          let payload = '';
          for (const line of frame.split('\n')) {
            if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('data: ')) payload += line.slice(6);
          }
          onEvent(event, payload);
        }
      }
    } catch (e) {
      if (e.name === 'AbortError') return;
    }
    setStatus('Live updates interrupted; reconnecting…');
    setTimeout(listen, 2000);
  }
  function onEvent(event, payload) {
    if (event === 'ping') return;
    const value = JSON.parse(payload);
    if (event === 'reader') {
      setStatus(value.state === 'READY' ? 'Live' : value.state === 'DEAD' ? 'Topic reader stopped: ' + value.reason : 'Reading topics…');
      return;
    }
    data[event] = value;
    render(event);
  }

  async function start() {
    let s;
    try { s = await session(); } catch (e) { setStatus('The gateway did not answer: ' + e.message); return; }
    if (!s) return;
    document.getElementById('key-form').hidden = true;
    document.getElementById('views').hidden = false;
    showView(viewFromLocation());
    await loadAll(s.views);
    listen();
  }

  window.addEventListener('hashchange', () => showView(viewFromLocation()));
  document.getElementById('key-form').addEventListener('submit', e => {
    e.preventDefault();
    sessionStorage.setItem(KEY, document.getElementById('api-key').value.trim());
    start();
  });
  setupWhatIf();
  start();
})();
