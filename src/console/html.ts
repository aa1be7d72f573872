/**
 * HTML of the web console: plain template functions. Every value goes through `esc` (or is built
 * from escaped parts with `html`), so data from partners never becomes markup.
 */
import { fromStoreTimestamp } from '../store/values.js';
import type { Session } from '../access/console-users.js';

export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export function esc(value: unknown): string {
  if (value === null || value === undefined) return '';
  return String(value).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** Tagged template: interpolated values are escaped unless they are Html (or arrays of Html). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  values.forEach((v, i) => {
    out += part(v) + strings[i + 1]!;
  });
  return new Html(out);
}

function part(v: unknown): string {
  if (v instanceof Html) return v.text;
  if (Array.isArray(v)) return v.map(part).join('');
  return esc(v);
}

export const NAV: readonly { path: string; label: string; manager?: boolean }[] = [
  { path: '/console/partners', label: 'Partners' },
  { path: '/console/runs', label: 'Runs' },
  { path: '/console/rejects', label: 'Rejects' },
  { path: '/console/commissions', label: 'Commissions', manager: true },
  { path: '/console/reports', label: 'Reports', manager: true },
  { path: '/console/fraud', label: 'Fraud queue', manager: true },
  { path: '/console/postbacks', label: 'Postbacks', manager: true },
  { path: '/console/affiliates', label: 'Affiliates', manager: true },
  { path: '/console/onboarding', label: 'Onboarding' },
  { path: '/console/activity', label: 'Activity' },
];

/** An affiliate's pages (./affiliate-routes.ts): its own figures only. */
export const AFFILIATE_NAV: readonly { path: string; label: string }[] = [
  { path: '/console/affiliate', label: 'Dashboard' },
  { path: '/console/affiliate/players', label: 'Players' },
  { path: '/console/affiliate/statements', label: 'Statements' },
  { path: '/console/affiliate/postbacks', label: 'Postbacks' },
];

export function layout(title: string, session: Session | undefined, body: Html, options: { current?: string; notice?: string; scripts?: Html; viewAs?: string } = {}): string {
  // An affiliate, and a manager viewing as one, get the affiliate's pages (a manager's keep `as`).
  const items = session?.user.role === 'affiliate' || options.viewAs !== undefined
    ? AFFILIATE_NAV.map((n) => ({ ...n, path: options.viewAs !== undefined ? `${n.path}?as=${encodeURIComponent(options.viewAs)}` : n.path, key: n.path }))
    : NAV.filter((n) => !n.manager || session?.user.role === 'manager').map((n) => ({ ...n, key: n.path }));
  const nav = session
    ? html`<nav aria-label="Main"><ul>${items.map((n) =>
      html`<li><a href="${n.path}"${n.key === options.current ? new Html(' aria-current="page"') : ''}>${n.label}</a></li>`)}</ul>
      <form method="post" action="/console/logout" class="logout"><input type="hidden" name="_csrf" value="${session.csrf}">
      <span>${session.user.name} (${session.user.role})</span> <button type="submit">Sign out</button></form></nav>`
    : html``;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · partner-sync</title><link rel="stylesheet" href="/console/assets/console.css"></head>
<body><header><a class="brand" href="${session?.user.role === 'affiliate' ? '/console/affiliate' : '/console/partners'}">partner-sync</a>${nav}</header>
<main><h1>${title}</h1>${options.notice ? html`<p class="notice" role="status">${options.notice}</p>` : ''}${body}</main>${options.scripts ?? ''}</body></html>`.text;
}

export function table(headers: readonly string[], rows: readonly (readonly unknown[])[], caption?: string): Html {
  if (rows.length === 0) return html`<p class="empty">Nothing to show.</p>`;
  return html`<table>${caption ? html`<caption>${caption}</caption>` : ''}<thead><tr>${headers.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead>
<tbody>${rows.map((r) => html`<tr>${r.map((c) => html`<td>${c}</td>`)}</tr>`)}</tbody></table>`;
}

export const csrfField = (session: Session): Html => html`<input type="hidden" name="_csrf" value="${session.csrf}">`;

export const CSS = `
:root{--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--bg:#fff;--accent:#0a58ca;--ok:#1a7f37;--late:#8a5a00;--breach:#b42318}
*{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,sans-serif;color:var(--fg);background:var(--bg)}
header{display:flex;align-items:center;gap:1.5rem;padding:.5rem 1rem;border-bottom:1px solid var(--line);background:#f6f8fa;flex-wrap:wrap}
.brand{font-weight:700;color:var(--fg);text-decoration:none}
nav{display:flex;align-items:center;gap:1rem;flex:1;flex-wrap:wrap}nav ul{display:flex;gap:1rem;list-style:none;margin:0;padding:0;flex-wrap:wrap}
nav a{color:var(--accent)}nav a[aria-current=page]{font-weight:700;color:var(--fg)}
.logout{margin-left:auto;display:flex;gap:.5rem;align-items:center}
main{padding:1rem 1.5rem;max-width:1400px}h1{font-size:1.4rem;margin:.2rem 0 1rem}h2{font-size:1.1rem;margin:1.5rem 0 .5rem}
table{border-collapse:collapse;margin:.5rem 0 1rem;width:100%}caption{text-align:left;font-weight:600;padding:.25rem 0}
th,td{border-bottom:1px solid var(--line);padding:.3rem .5rem;text-align:left;vertical-align:top}th{background:#f6f8fa}
td:first-child{white-space:nowrap}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}td>span.num{display:block;text-align:right;font-variant-numeric:tabular-nums}
.state{display:inline-block;white-space:nowrap;padding:0 .45rem;border-radius:.6rem;font-weight:600;color:#fff}
.state-ok{background:var(--ok)}.state-late{background:var(--late)}.state-breach{background:var(--breach)}.state-none{background:var(--muted)}
.notice{background:#ddf4ff;border:1px solid #54aeff;padding:.5rem .75rem}.error{background:#ffebe9;border:1px solid #ff8182;padding:.5rem .75rem}
form.inline{display:inline-flex;gap:.3rem;align-items:center;margin:0}input,select,button{font:inherit}
button{padding:.2rem .6rem;border:1px solid var(--line);border-radius:4px;background:#f6f8fa;cursor:pointer}
button.primary{background:var(--accent);color:#fff;border-color:var(--accent)}
pre.sample{max-height:7.5rem;margin:0;padding:.3rem .5rem;font-size:12px}
label{margin-right:.3rem}pre{background:#f6f8fa;padding:.5rem;overflow:auto;max-height:20rem}
.login{max-width:22rem}.login label{display:block;margin:.6rem 0 .2rem}.login input{width:100%;padding:.3rem}
.filters{display:flex;gap:.75rem;align-items:end;flex-wrap:wrap;margin-bottom:.5rem}.muted{color:var(--muted)}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:1rem 1.5rem;max-width:1400px}
figure{margin:0}figcaption{font-weight:600;margin:.25rem 0}.chart{position:relative;height:280px}
details{margin:1rem 0}summary{cursor:pointer;color:var(--accent)}.pager{display:flex;gap:1.5rem}
progress{width:14rem;height:1rem}
svg.bars{width:100%;max-width:760px;height:170px;border-bottom:1px solid var(--line)}.statement-total{font-size:1.05rem}
.wide{overflow-x:auto}.wide td{white-space:nowrap}.wide td .prose{display:block;white-space:normal;min-width:22rem;max-width:40rem}
@media print{header,nav,.filters,.no-print,.pager,details{display:none!important}main{max-width:none;padding:0}.wide{overflow:visible}a{color:inherit;text-decoration:none}
table{page-break-inside:auto}tr{page-break-inside:avoid}th{background:#eee!important;-webkit-print-color-adjust:exact;print-color-adjust:exact}}
`;

/** A stored timestamp as "YYYY-MM-DD HH:MM:SS" (UTC), or empty. */
export const when = (v: unknown): string => (fromStoreTimestamp(v) ?? '').slice(0, 19).replace('T', ' ');

/** A figure in a right-aligned cell. */
export const num = (v: unknown): Html => html`<span class="num">${v}</span>`;

/** A query string of the given parameters, the empty and absent ones left out. */
export const q = (params: Record<string, string | undefined>): string => {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') u.set(k, v);
  return u.toString();
};
