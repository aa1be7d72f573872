/**
 * The human documentation page (`GET /docs`), rendered from the OpenAPI document alone: per
 * route its method, path, authentication, parameters, request fields (name, type, required,
 * limits, format), responses and a curl example. One self-contained HTML page: inline style, no
 * scripts, no fonts or anything else fetched from elsewhere.
 */
import { ENTITIES, VARIANTS, type Entity, type Variant } from '../types.js';
import { exampleRecord, type JsonObject } from './openapi/schemas.js';

/** A sample query of each report route for its curl example. */
const REPORT_QUERY: Record<string, string> = {
  '/api/v1/reports/affiliates': '?from=2026-10-01&to=2026-10-31&by=month',
  '/api/v1/reports/affiliates/explain': '?column=ftd_count&affiliate=aff-7&month=2026-10',
  '/api/v1/reports/funnel': '?from=2026-10-01&to=2026-10-31&by=affiliate',
};

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

const escapeHtml = (text: unknown): string =>
  String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/** Follows a local `#/...` reference of the document (one level at a time, until a non-ref). */
function resolve(doc: JsonObject, node: unknown): JsonObject {
  let current = node as JsonObject;
  for (let hops = 0; hops < 10 && current && typeof current.$ref === 'string'; hops++) {
    const path = (current.$ref as string).replace(/^#\//, '').split('/');
    current = path.reduce<unknown>((at, key) => (at as JsonObject | undefined)?.[key], doc) as JsonObject;
  }
  return current ?? {};
}

const refName = (node: unknown): string | undefined => {
  const r = (node as JsonObject | undefined)?.$ref;
  return typeof r === 'string' ? r.split('/').pop() : undefined;
};

function typeText(doc: JsonObject, schema: JsonObject): string {
  if (schema.$ref) return refName(schema) ?? 'object';
  if ('const' in schema) return `"${String(schema.const)}"`;
  const t = schema.type;
  const base = Array.isArray(t) ? t.join(' | ') : typeof t === 'string' ? t : 'any';
  if (base === 'array' && schema.items) return `array of ${typeText(doc, schema.items as JsonObject)}`;
  return base;
}

/** The limits of a field in words: length, bounds, enum, pattern, and our x- keywords. */
function limitsText(schema: JsonObject): string {
  const parts: string[] = [];
  const add = (key: string, text: (v: unknown) => string) => {
    if (schema[key] !== undefined) parts.push(text(schema[key]));
  };
  add('minLength', (v) => `length ≥ ${String(v)}`);
  add('maxLength', (v) => `length ≤ ${String(v)}`);
  add('minimum', (v) => `≥ ${String(v)}`);
  add('exclusiveMinimum', (v) => `> ${String(v)}`);
  add('maximum', (v) => `≤ ${String(v)}`);
  add('exclusiveMaximum', (v) => `< ${String(v)}`);
  add('minItems', (v) => `items ≥ ${String(v)}`);
  add('maxItems', (v) => `items ≤ ${String(v)}`);
  add('enum', (v) => `one of ${(v as unknown[]).map((x) => (x === null ? 'null' : String(x))).join(', ')}`);
  add('pattern', (v) => `pattern ${String(v)}`);
  add('default', (v) => `default ${String(v)}`);
  add('x-maxSignificantDigits', (v) => `≤ ${String(v)} significant digits`);
  add('x-maxDecimalPlaces', (v) => `≤ ${String(v)} decimal places`);
  return parts.join('; ');
}

function fieldsTable(doc: JsonObject, schema: JsonObject): string {
  const properties = (schema.properties ?? {}) as Record<string, JsonObject>;
  const required = new Set((schema.required ?? []) as string[]);
  const rows = Object.entries(properties).map(
    ([name, field]) =>
      `<tr><td><code>${escapeHtml(name)}</code></td><td>${escapeHtml(typeText(doc, field))}</td><td>${required.has(name) ? 'yes' : 'no'}</td>` +
      `<td>${escapeHtml(limitsText(field))}</td><td>${escapeHtml(field.format ?? '')}</td><td>${escapeHtml(field.description ?? '')}</td></tr>`,
  );
  const closed = schema.additionalProperties === false ? '<p>Unknown properties are refused (422).</p>' : '';
  return `<table><tr><th>field</th><th>type</th><th>required</th><th>limits</th><th>format</th><th>meaning</th></tr>${rows.join('')}</table>${closed}`;
}

function authText(doc: JsonObject, op: JsonObject): string {
  const security = (op.security ?? doc.security) as JsonObject[] | undefined;
  if (!security || security.length === 0 || security.every((s) => Object.keys(s).length === 0)) return 'none';
  const words = security
    .filter((s) => Object.keys(s).length > 0)
    .map((s) =>
      Object.entries(s)
        .map(([scheme, scopes]) => ((scopes as string[]).length > 0 ? `${scheme} (scope ${(scopes as string[]).join(', ')})` : scheme))
        .join(' + '),
    );
  const optional = security.some((s) => Object.keys(s).length === 0) ? ' (optional)' : '';
  return words.join(' or ') + optional;
}

/** The variant and entity of a records path, for its example body. */
function recordRoute(path: string): { variant: Variant; entity: Entity; bulk: boolean } | undefined {
  const m = /^\/api\/v1\/([^/]+)\/([^/]+?)(\/bulk)?$/.exec(path);
  if (!m) return undefined;
  const variant = VARIANTS.find((v) => v === m[1]);
  const entity = ENTITIES.find((e) => e === m[2]);
  return variant && entity ? { variant, entity, bulk: m[3] !== undefined } : undefined;
}

function curlExample(base: string, method: string, path: string, op: JsonObject): string {
  const url = `${base}${path}`;
  if (path === '/oauth/token') {
    return `curl -s -X POST ${url} \\\n  -H 'Content-Type: application/x-www-form-urlencoded' \\\n  -d grant_type=client_credentials -d client_id="$CLIENT_ID" -d client_secret="$CLIENT_SECRET"`;
  }
  const auth = authText({}, op) === 'none' ? '' : ` \\\n  -H "Authorization: Bearer $TOKEN"`;
  if (method === 'get') {
    const query = path.startsWith('/api/v1/reports/') ? REPORT_QUERY[path] ?? '' : path.startsWith('/api/') ? '?per_page=50' : '';
    return `curl -s '${url}${query}'${auth}`;
  }
  const route = recordRoute(path);
  const record = route ? exampleRecord(route.variant, route.entity) : {};
  const body = JSON.stringify(route?.bulk ? [record] : record);
  return `curl -s -X POST ${url}${auth} \\\n  -H 'Content-Type: application/json' \\\n  -H "Idempotency-Key: $(uuidgen)" \\\n  -d '${body}'`;
}

function operationSection(doc: JsonObject, base: string, path: string, method: string, op: JsonObject): string {
  const id = escapeHtml(`${method}-${path}`.replace(/[^a-zA-Z0-9-]+/g, '-'));
  const parts: string[] = [];
  parts.push(`<section id="${id}"><h3><span class="m m-${method}">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></h3>`);
  if (op.summary) parts.push(`<p><strong>${escapeHtml(op.summary)}</strong></p>`);
  if (op.description) parts.push(`<p>${escapeHtml(op.description)}</p>`);
  parts.push(`<p>Authentication: ${escapeHtml(authText(doc, op))}</p>`);
  const params = ((op.parameters ?? []) as JsonObject[]).map((p) => resolve(doc, p));
  if (params.length > 0) {
    const rows = params.map((p) => {
      const schema = (p.schema ?? {}) as JsonObject;
      return `<tr><td><code>${escapeHtml(p.name)}</code></td><td>${escapeHtml(p.in)}</td><td>${escapeHtml(typeText(doc, schema))}</td><td>${p.required ? 'yes' : 'no'}</td><td>${escapeHtml(limitsText(schema))}</td><td>${escapeHtml(schema.format ?? '')}</td><td>${escapeHtml(p.description ?? '')}</td></tr>`;
    });
    parts.push(`<h4>Parameters</h4><table><tr><th>name</th><th>in</th><th>type</th><th>required</th><th>limits</th><th>format</th><th>meaning</th></tr>${rows.join('')}</table>`);
  }
  const body = op.requestBody as JsonObject | undefined;
  if (body) {
    for (const [type, media] of Object.entries((body.content ?? {}) as Record<string, JsonObject>)) {
      const outer = (media.schema ?? {}) as JsonObject;
      parts.push(`<h4>Request body <code>${escapeHtml(type)}</code></h4>`);
      let record = resolve(doc, outer);
      if (outer.type === 'array') {
        parts.push(`<p>A JSON array of ${escapeHtml(limitsText(outer))} ${escapeHtml(refName(outer.items) ?? 'records')} records, each:</p>`);
        record = resolve(doc, outer.items);
      } else if (refName(outer)) {
        parts.push(`<p>One <code>${escapeHtml(refName(outer))}</code> object.</p>`);
      }
      parts.push(fieldsTable(doc, record));
    }
  }
  const responses = Object.entries((op.responses ?? {}) as Record<string, unknown>).map(([status, r]) => {
    const response = resolve(doc, r);
    const media = Object.entries((response.content ?? {}) as Record<string, JsonObject>)
      .map(([type, m]) => `${type}${refName(m.schema) ? ` (${refName(m.schema) as string})` : ''}`)
      .join(', ');
    const headers = Object.keys((response.headers ?? {}) as JsonObject).join(', ');
    return `<tr><td>${escapeHtml(status)}</td><td>${escapeHtml(response.description ?? '')}</td><td>${escapeHtml(media)}</td><td>${escapeHtml(headers)}</td></tr>`;
  });
  parts.push(`<h4>Responses</h4><table><tr><th>status</th><th>meaning</th><th>body</th><th>headers</th></tr>${responses.join('')}</table>`);
  parts.push(`<h4>Example</h4><pre>${escapeHtml(curlExample(base, method, path, op))}</pre></section>`);
  return parts.join('\n');
}

function schemaSection(doc: JsonObject, name: string, schema: JsonObject): string {
  const body = schema.properties ? fieldsTable(doc, schema) : `<pre>${escapeHtml(JSON.stringify(schema, null, 2))}</pre>`;
  return `<section id="schema-${escapeHtml(name)}"><h3><code>${escapeHtml(name)}</code></h3>${schema.description ? `<p>${escapeHtml(schema.description)}</p>` : ''}${body}</section>`;
}

const STYLE = `body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;color:#1d2330;line-height:1.45}
code,pre{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.9em}pre{background:#f3f5f8;padding:.75rem;overflow-x:auto;border-radius:4px}
table{border-collapse:collapse;width:100%;margin:.5rem 0 1rem}th,td{border:1px solid #d5dae3;padding:.3rem .5rem;text-align:left;vertical-align:top;font-size:.9em}th{background:#eef1f6}
section{border-top:1px solid #d5dae3;padding-top:.5rem;margin-top:1.5rem}.m{display:inline-block;min-width:3.5rem;text-align:center;border-radius:3px;color:#fff;padding:0 .4rem}
.m-get{background:#2f6fbd}.m-post{background:#2f8a4c}nav ul{columns:2}`;

/** The whole page. `base` is the server URL used in the curl examples. */
export function renderDocsPage(doc: JsonObject, base = '$BASE_URL'): string {
  const info = (doc.info ?? {}) as JsonObject;
  const paths = (doc.paths ?? {}) as Record<string, JsonObject>;
  const ops: { path: string; method: string; op: JsonObject }[] = [];
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) if (item[method]) ops.push({ path, method, op: item[method] as JsonObject });
  }
  const nav = ops
    .map(({ path, method }) => `<li><a href="#${escapeHtml(`${method}-${path}`.replace(/[^a-zA-Z0-9-]+/g, '-'))}">${method.toUpperCase()} ${escapeHtml(path)}</a></li>`)
    .join('');
  const schemas = Object.entries(((doc.components as JsonObject | undefined)?.schemas ?? {}) as Record<string, JsonObject>);
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(info.title ?? 'API')}</title><style>${STYLE}</style></head>
<body>
<h1>${escapeHtml(info.title ?? 'API')} <small>version ${escapeHtml(info.version ?? '')}</small></h1>
<p>${escapeHtml(info.description ?? '')}</p>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI ${escapeHtml(doc.openapi)}).</p>
<h2>Routes</h2><nav><ul>${nav}</ul></nav>
${ops.map(({ path, method, op }) => operationSection(doc, base, path, method, op)).join('\n')}
<h2>Schemas</h2>
${schemas.map(([name, schema]) => schemaSection(doc, name, schema)).join('\n')}
</body></html>
`;
}
