/**
 * What a sandbox route answers, as data: status, body and headers. Routes return a Reply and the
 * server writes it, so faults (truncated bodies, injected errors) are applied in one place.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface Reply {
  status: number;
  /** JSON-serialisable body, or text when `contentType` is not JSON. */
  body: unknown;
  headers?: Record<string, string>;
  contentType?: string;
  /** True for a list page (an envelope): the malformed-body fault applies to these. */
  page?: boolean;
}

/** The error body of every sandbox error: OAuth 2.0 style `error` code plus a readable description. */
export interface ErrorBody {
  error: string;
  error_description: string;
  /** For 422: which query parameter was wrong. */
  parameter?: string;
}

export function jsonReply(status: number, body: unknown, headers?: Record<string, string>): Reply {
  return headers === undefined ? { status, body } : { status, body, headers };
}

export function errorReply(status: number, error: string, description: string, extra: { parameter?: string; headers?: Record<string, string> } = {}): Reply {
  const body: ErrorBody = { error, error_description: description };
  if (extra.parameter !== undefined) body.parameter = extra.parameter;
  return jsonReply(status, body, extra.headers);
}

/** 422 for a bad query parameter, naming it. */
export function invalidParameter(parameter: string, description: string): Reply {
  return errorReply(422, 'invalid_parameter', description, { parameter });
}

export function notFound(path: string): Reply {
  return errorReply(404, 'not_found', `no such resource: ${path}`);
}

export function methodNotAllowed(method: string, allowed: readonly string[]): Reply {
  return errorReply(405, 'method_not_allowed', `${method} is not allowed here; use ${allowed.join(' or ')}`, { headers: { Allow: allowed.join(', ') } });
}

/** The serialised body of a reply. */
export function replyText(reply: Reply): string {
  if (reply.contentType !== undefined && !reply.contentType.startsWith('application/json')) return String(reply.body);
  return JSON.stringify(reply.body);
}

export function writeReply(res: ServerResponse, reply: Reply, text: string = replyText(reply)): void {
  const body = Buffer.from(text, 'utf8');
  res.writeHead(reply.status, {
    'Content-Type': reply.contentType ?? 'application/json; charset=utf-8',
    'Content-Length': String(body.length),
    'Cache-Control': 'no-store',
    ...reply.headers,
  });
  res.end(body);
}

export class BodyTooLargeError extends Error {}

/** Reads a request body as text, refusing more than `limit` bytes. */
export async function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > limit) throw new BodyTooLargeError(`request body larger than ${limit} bytes`);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The media type of a Content-Type header, lower case, without parameters. */
export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}
