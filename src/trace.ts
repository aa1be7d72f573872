/**
 * Traces: runs, windows, batches, after-load evaluations, pushes and postback deliveries as
 * OpenTelemetry spans, exported over OTLP/HTTP (docs/worker.md, Traces). Off unless the
 * environment names an endpoint (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT;
 * OTEL_SDK_DISABLED=true turns it off again): with no provider registered the API's tracer is a
 * no-op, so a span costs a function call. A process sets tracing up once (the CLI's `main`, the
 * postbacks' delivery thread) and shuts it down at its end, which exports what is still buffered.
 *
 * Spans carry identifiers and counts: no personal value, no secret, no URL (a host at most). An
 * exception is recorded with its name and message, through the caller's redactor when it has one,
 * and any URL in them without its query string.
 *
 *   await inSpan('window', { partner, stream, 'window.from': from }, async (span) => { ... });
 */
import { context, ROOT_CONTEXT, SpanStatusCode, trace, type Attributes, type Link, type Span, type SpanContext } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';

export type { Attributes, Span, SpanContext } from '@opentelemetry/api';
export { SpanStatusCode } from '@opentelemetry/api';

const TRACER = 'partner-sync';
export const DEFAULT_SERVICE_NAME = 'partner-sync';

/** The OTLP/HTTP traces URL the environment names; undefined: tracing is off. */
export function tracesEndpoint(env: NodeJS.ProcessEnv): string | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true' || env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return undefined;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const [url, name] = traces ? [traces, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'] : base ? [`${base.replace(/\/+$/, '')}/v1/traces`, 'OTEL_EXPORTER_OTLP_ENDPOINT'] : [];
  if (url === undefined) return undefined;
  // The value is not repeated: a collector's URL may carry credentials.
  if (!/^https?:$/.test(protocolOf(url))) throw new Error(`${name} must be an http:// or https:// URL`);
  return url;
}

function protocolOf(url: string): string {
  try {
    return new URL(url).protocol;
  } catch {
    return '';
  }
}

let installed: { provider: BasicTracerProvider; done?: Promise<void> } | undefined;

/**
 * Registers a tracer provider with these span processors, and the AsyncLocalStorage context
 * manager (a span begun inside another, across awaits, is its child), as the process's globals.
 * The function returned flushes the processors, shuts them down and unregisters both (the tests
 * install an in-memory exporter through it).
 */
export function installTracing(spanProcessors: SpanProcessor[], serviceName = DEFAULT_SERVICE_NAME): () => Promise<void> {
  const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': serviceName }), spanProcessors });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  const mine = { provider } as NonNullable<typeof installed>;
  installed = mine;
  return () => (mine.done ??= provider.shutdown().finally(() => {
    trace.disable();
    context.disable();
    if (installed === mine) installed = undefined;
  }));
}

/**
 * Tracing as the environment says: off (undefined) without an OTLP endpoint, else spans batched
 * to it (OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_TIMEOUT and OTEL_BSP_* are read by the
 * exporter and the processor themselves). The function returned exports what is buffered and
 * stops. Throws, naming the variable, when the endpoint is not an http(s) URL.
 */
export function setupTracing(env: NodeJS.ProcessEnv = process.env): (() => Promise<void>) | undefined {
  const url = tracesEndpoint(env);
  if (url === undefined) return undefined;
  return installTracing([new BatchSpanProcessor(new OTLPTraceExporter({ url }))], env.OTEL_SERVICE_NAME?.trim() || DEFAULT_SERVICE_NAME);
}

/** Exports the spans buffered so far (before a process ends without returning: the worker abandoning runs). */
export async function flushTracing(): Promise<void> {
  await installed?.provider.forceFlush();
}

export interface InSpanOptions {
  /** Applied to a recorded exception's message and stack (the definitions' secrets). */
  redact?: (text: string) => string;
  /** A trace of its own, not a child of the span active now (a group commit of several requests). */
  root?: boolean;
  links?: Link[];
}

/** A URL's query string is left out of what a span records (`?…`): it may carry a token. */
const withoutQueries = (text: string): string => text.replace(/(\bhttps?:\/\/[^\s?#"'<>]+)\?[^\s#"'<>]*?(?=[:,;.)\]]*(?:[\s#"'<>]|$))/gi, '$1?…');

/** Records `error` (an Error, or its name and message) on the span, redacted, URLs without their queries, and sets its status ERROR. */
export function recordFailure(span: Span, error: unknown, redact: (text: string) => string = (t) => t): void {
  const e: { name: string; message: string; stack?: string } = typeof (error as Error | undefined)?.message === 'string' ? error as Error : { name: 'Error', message: String(error) };
  const clean = (text: string): string => withoutQueries(redact(text));
  const message = clean(e.message);
  span.recordException({ name: e.name, message, ...(e.stack === undefined ? {} : { stack: clean(e.stack) }) });
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

/**
 * Runs `fn` in a span `name`, active while it runs (spans begun in it are its children), and ends
 * the span when `fn` settles; a throw is recorded (recordFailure) and thrown on. `fn` starts at
 * once, in this turn, as it would without the span.
 */
export function inSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>, options: InSpanOptions = {}): Promise<T> {
  const spanOptions = { attributes, ...(options.root ? { root: true } : {}), ...(options.links ? { links: options.links } : {}) };
  return trace.getTracer(TRACER).startActiveSpan(name, spanOptions, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      recordFailure(span, error, options.redact);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** A span begun now and ended by its owner (a run, started and finished by separate calls); not made active. */
export function startSpan(name: string, attributes: Attributes): Span {
  return trace.getTracer(TRACER).startSpan(name, { attributes });
}

/** Runs `fn` with `span` active: the spans begun in it are its children. */
export function withSpan<T>(span: Span, fn: () => T): T {
  return context.with(trace.setSpan(context.active(), span), fn);
}

/** Runs `fn` outside every span: what it begins starts traces of its own (work left running behind a span's end). */
export function detached<T>(fn: () => T): T {
  return context.with(ROOT_CONTEXT, fn);
}

/** The active span's context, to link to (undefined when none is recording). */
export function activeSpanContext(): SpanContext | undefined {
  const span = trace.getActiveSpan();
  return span?.isRecording() ? span.spanContext() : undefined;
}

/** The active span, to add attributes to (a no-op span when none). */
export function activeSpan(): Span | undefined {
  return trace.getActiveSpan();
}
