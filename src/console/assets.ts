/**
 * The console's static assets under /console/assets/: its style sheet (./html.ts), Chart.js
 * (served from node_modules, no CDN: the CSP allows scripts from 'self' only) and the two page
 * scripts below, which read what the pages hold and never write markup from data.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { packageRoot } from '../paths.js';
import { CSS } from './html.js';
import { CONSOLE_ROUTE } from './request.js';

const CHART_JS = join(packageRoot(), 'node_modules', 'chart.js', 'dist', 'chart.umd.js');

export function assetRoutes(app: FastifyInstance): void {
  app.get('/console/assets/console.css', CONSOLE_ROUTE, async (_request, reply) => reply.type('text/css; charset=utf-8').header('cache-control', 'max-age=3600').send(CSS));
  app.get('/console/assets/chart.umd.js', CONSOLE_ROUTE, async (_request, reply) => reply.type('text/javascript; charset=utf-8').header('cache-control', 'max-age=86400').send(readFileSync(CHART_JS)));
  app.get('/console/assets/backfill.js', CONSOLE_ROUTE, async (_request, reply) => reply.type('text/javascript; charset=utf-8').send(BACKFILL_JS));
  app.get('/console/assets/reports.js', CONSOLE_ROUTE, async (_request, reply) => reply.type('text/javascript; charset=utf-8').send(REPORTS_JS));
}

/** Draws the Reports page's charts from its inert JSON data (Chart.js, served from node_modules). */
const REPORTS_JS = `(function () {
  var el = document.getElementById('report-data'); if (!el || !window.Chart) return;
  var d = JSON.parse(el.textContent);
  var base = { animation: false, maintainAspectRatio: false, plugins: { legend: { position: 'bottom' } } };
  function chart(id, config) { var c = document.getElementById(id); if (c) new Chart(c, config); }
  chart('ftd', { type: 'bar', data: { labels: d.periods, datasets: [{ label: 'FTDs', data: d.ftd, backgroundColor: '#0a58ca' }] },
    options: Object.assign({}, base, { scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } }) });
  chart('revenue', { type: 'line', data: { labels: d.periods, datasets: [
    { label: 'GGR USD', data: d.ggr, borderColor: '#1a7f37', backgroundColor: '#1a7f37', pointRadius: 2 },
    { label: 'NGR USD', data: d.ngr, borderColor: '#8a5a00', backgroundColor: '#8a5a00', pointRadius: 2 } ] },
    options: Object.assign({}, base, { scales: { y: { beginAtZero: true } } }) });
  chart('commissions', { type: 'bar', data: { labels: d.months, datasets: [{ label: 'Net commissions USD', data: d.commissions, backgroundColor: '#6f42c1' }] },
    options: Object.assign({}, base, { scales: { y: { beginAtZero: true } } }) });
  chart('funnel', { type: 'bar', data: { labels: d.funnelLabels, datasets: [{ label: 'customers', data: d.funnel, backgroundColor: '#0a58ca' }] },
    options: Object.assign({}, base, { indexAxis: 'y', scales: { x: { beginAtZero: true, ticks: { precision: 0 } } } }) });
})();`;

/** Polls a backfill's progress (GET …/progress) and fills the page's cells until it is done; no reload. */
const BACKFILL_JS = `(function () {
  var root = document.getElementById('backfill'); if (!root) return;
  var url = root.getAttribute('data-progress');
  function set(row, field, value) { var c = row.querySelector('[data-field="' + field + '"]'); if (c) c.textContent = String(value); }
  function render(job) {
    var state = document.getElementById('bf-state');
    state.textContent = job.state;
    state.className = 'state state-' + (job.state === 'failed' ? 'breach' : job.state === 'done' ? 'ok' : 'late');
    var read = 0, all = 0;
    job.streams.forEach(function (s) {
      var row = root.querySelector('tr[data-stream="' + s.stream + '"]'); if (!row) return;
      set(row, 'window', s.windows > 0 ? s.window + '/' + s.windows : '-');
      set(row, 'days', s.days || '-');
      set(row, 'pulled', s.pulled);
      set(row, 'loaded', s.loaded);
      set(row, 'rejected', s.rejected === undefined ? '-' : s.rejected);
      set(row, 'status', (s.status || (s.window > 0 ? 'running' : 'waiting')) + (s.error ? ': ' + s.error : ''));
      all += s.windows || 1;
      read += s.status ? (s.windows || 1) : Math.max(0, s.window - 1);
    });
    var share = job.state === 'running' ? read / Math.max(1, all) : 1;
    document.getElementById('bf-bar').value = share;
    document.getElementById('bf-pct').textContent = Math.floor(share * 100) + '%';
    if (job.state !== 'running') document.getElementById('bf-summary').textContent = job.error ? 'Failed: ' + job.error : 'Done.';
  }
  function tick() {
    fetch(url, { credentials: 'same-origin', cache: 'no-store' }).then(function (r) { return r.ok ? r.json() : null; }).then(function (job) {
      if (!job) return;
      render(job);
      if (job.state === 'running') setTimeout(tick, 300);
    }, function () { setTimeout(tick, 2000); });
  }
  tick();
})();`;
