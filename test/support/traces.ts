/**
 * Spans recorded in memory: `recordSpansEach()` installs a tracer provider with an
 * InMemorySpanExporter behind a SimpleSpanProcessor (through src/trace.ts's installTracing, the
 * same registration the service's setupTracing makes) before each test of the suite, and removes
 * it after, so that no other test records anything.
 *
 *   const traces = recordSpansEach();
 *   it('...', async () => { ...; const [run] = traces.named('run'); assert.equal(traces.childrenOf(run!, 'window').length, 3); });
 *
 * `otlpSpans(body)` reads the spans of an export request a local receiver got (a process's own exporter).
 */
import type { AttributeValue } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { installTracing } from '../../src/trace.js';

export interface RecordedSpans {
  /** Every span ended since the test began, in the order they ended. */
  all(): ReadableSpan[];
  named(name: string): ReadableSpan[];
  /** The spans whose parent is `parent`, of this name when given. */
  childrenOf(parent: ReadableSpan, name?: string): ReadableSpan[];
  /** The span's parent among the recorded spans. */
  parentOf(span: ReadableSpan): ReadableSpan | undefined;
  /** Every attribute value of every span and of its events and links, as text. */
  attributeTexts(): string[];
}

export function recordSpansEach(): RecordedSpans {
  // A new exporter each test: one that was shut down takes no more spans.
  let exporter = new InMemorySpanExporter();
  let uninstall: (() => Promise<void>) | undefined;
  beforeEach(() => {
    exporter = new InMemorySpanExporter();
    uninstall = installTracing([new SimpleSpanProcessor(exporter)]);
  });
  afterEach(async () => {
    await uninstall?.();
    uninstall = undefined;
  });
  const all = () => exporter.getFinishedSpans();
  const text = (v: AttributeValue | undefined): string[] => (v === undefined || v === null ? [] : Array.isArray(v) ? v.map(String) : [String(v)]);
  return {
    all,
    named: (name) => all().filter((s) => s.name === name),
    childrenOf: (parent, name) => all().filter((s) => s.parentSpanContext?.spanId === parent.spanContext().spanId && (name === undefined || s.name === name)),
    parentOf: (span) => all().find((s) => s.spanContext().spanId === span.parentSpanContext?.spanId),
    attributeTexts: () => all().flatMap((s) => [
      ...Object.values(s.attributes).flatMap(text),
      ...s.events.flatMap((e) => [e.name, ...Object.values(e.attributes ?? {}).flatMap(text)]),
      ...s.links.flatMap((l) => Object.values(l.attributes ?? {}).flatMap(text)),
      s.status.message ?? '',
    ]),
  };
}

/** A span as an OTLP/HTTP JSON export request carries it (what a collector receives). */
export interface OtlpSpan {
  name: string;
  service: string;
  spanId: string;
  parentSpanId?: string;
  attributes: Record<string, string | number | boolean>;
}

type OtlpValue = { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };
type OtlpAttribute = { key: string; value: OtlpValue };

/** The spans of an OTLP/HTTP JSON export request. */
export function otlpSpans(body: string): OtlpSpan[] {
  const value = (v: OtlpValue): string | number | boolean => v.stringValue ?? v.boolValue ?? v.doubleValue ?? Number(v.intValue);
  const attributes = (list: OtlpAttribute[] = []) => Object.fromEntries(list.map((a) => [a.key, value(a.value)]));
  const request = JSON.parse(body) as { resourceSpans: { resource: { attributes: OtlpAttribute[] }; scopeSpans: { spans: { name: string; spanId: string; parentSpanId?: string; attributes: OtlpAttribute[] }[] }[] }[] };
  return request.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans.map((s) => ({
    name: s.name, service: String(attributes(rs.resource.attributes)['service.name']), spanId: s.spanId, attributes: attributes(s.attributes), ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
  }))));
}
