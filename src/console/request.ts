/**
 * The console's rules for every request, shared by its route groups (./routes.ts):
 * - the session comes from the `ps_console` cookie; a page without one redirects to the login
 *   page (GET) or answers 401 (POST);
 * - every POST carries the session's CSRF token (`_csrf` field): without it or with another, 403;
 * - a page or action of the other role answers 403;
 * - every page goes out uncached, with its server timing, framing refused and a strict CSP.
 * What the console is given (ConsoleDeps) is what the API's route modules are given: one app
 * serves both, composed where `serve` builds it (src/cli/server.ts).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { loadPlans } from '../commission/load-plans.js';
import type { Plan } from '../commission/plans.js';
import { findSession, type Role, type Session } from '../access/console-users.js';
import type { PartnerDefinition } from '../config/definition.js';
import type { InvalidDefinition } from '../config/load-definitions.js';
import type { Logger, Redact } from '../log.js';
import type { Loader } from '../pipeline/load.js';
import type { Store } from '../store/store.js';
import { html, layout } from './html.js';

/** What the console's routes are given by the server that serves them. */
export interface ConsoleDeps {
  store: Store;
  /** The one Loader of the process (src/pipeline/load.ts with jobs/load-hooks.ts): runs and replays load through it. */
  loader: Loader;
  logger: Logger;
  /** The connector definitions and settings folder (runs, replays, commission plans); `invalid`: the files that cannot load (the Partners page says why). */
  config?: { dir: string; definitions: readonly PartnerDefinition[]; invalid?: readonly InvalidDefinition[]; redact: Redact };
}

/** The settings folder's commission plans, read once, at the first page that needs them (each route group keeps its own). */
export function commissionPlansOf(deps: ConsoleDeps): () => Promise<Plan[]> {
  let plans: Plan[] | undefined;
  return async () => {
    if (plans) return plans;
    const file = deps.config ? join(deps.config.dir, 'commissions.yaml') : undefined;
    plans = file && existsSync(file) ? (await loadPlans(file)).plans : [];
    return plans;
  };
}

export const SESSION_COOKIE = 'ps_console';
/**
 * Console pages are served by the API's server but are not part of the partner API document
 * (/openapi.json): the server leaves out of it every route whose config says `openapi: false`.
 */
export const CONSOLE_ROUTE = { config: { openapi: false } };

export type Form = Record<string, string | undefined>;
export type Query = Record<string, string | undefined>;

export function cookieOf(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}

/** The helpers every route group of the console answers with. */
export interface ConsoleRequests {
  /** Sends a page (HTML) with the console's headers. */
  send(reply: FastifyReply, page: string, status?: number): FastifyReply;
  /** The session of the request's cookie, if it is signed in. */
  sessionOf(request: FastifyRequest): Promise<Session | undefined>;
  /** The signed-in session (of `role`, when given, with a valid CSRF token on a POST), or undefined once the refusal is sent. */
  signedIn(request: FastifyRequest, reply: FastifyReply, role?: Role | 'any'): Promise<Session | undefined>;
  /** Redirects (303) to `path` with a notice shown at the top of the page. */
  after(reply: FastifyReply, path: string, notice: string): FastifyReply;
  /** The notice a redirect carried. */
  notice(request: FastifyRequest): string | undefined;
}

export function consoleRequests(store: Store): ConsoleRequests {
  const send = (reply: FastifyReply, page: string, status = 200) =>
    reply.code(status).header('cache-control', 'no-store').header('server-timing', `app;dur=${reply.elapsedTime.toFixed(1)}`).header('x-frame-options', 'DENY')
      .header('content-security-policy', "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'")
      .type('text/html; charset=utf-8').send(page);

  const sessionOf = async (request: FastifyRequest): Promise<Session | undefined> => {
    const id = cookieOf(request, SESSION_COOKIE);
    return id ? findSession(store, id) : undefined;
  };

  // No role: any staff role; `any`: every role, affiliates too (signing out).
  const signedIn = async (request: FastifyRequest, reply: FastifyReply, role?: Role | 'any'): Promise<Session | undefined> => {
    const session = await sessionOf(request);
    if (!session) {
      if (request.method === 'GET') void reply.redirect(`/console/login?next=${encodeURIComponent(request.url)}`, 303);
      else void send(reply, layout('Sign in needed', undefined, html`<p class="error">Your session has ended. <a href="/console/login">Sign in</a> again.</p>`), 401);
      return undefined;
    }
    if (request.method === 'POST') {
      const token = (request.body as Form | undefined)?._csrf;
      if (token !== session.csrf) {
        void send(reply, layout('Refused', session, html`<p class="error">This form is stale or did not come from the console (CSRF token missing or wrong). Reload the page and try again.</p>`), 403);
        return undefined;
      }
    }
    // An affiliate sees its own pages only (./affiliate-routes.ts), never the staff's.
    if (session.user.role === 'affiliate' && role !== 'affiliate' && role !== 'any') {
      void send(reply, layout('Not allowed', session, html`<p class="error">This page is for the platform's staff. <a href="/console/affiliate">Your dashboard</a>.</p>`), 403);
      return undefined;
    }
    if (role && role !== 'any' && session.user.role !== role) {
      void send(reply, layout('Not allowed', session, html`<p class="error">This needs the ${role} role; you are signed in as ${session.user.role}.</p>`), 403);
      return undefined;
    }
    return session;
  };

  const after = (reply: FastifyReply, path: string, notice: string) => reply.redirect(`${path}${path.includes('?') ? '&' : '?'}notice=${encodeURIComponent(notice)}`, 303);
  const notice = (request: FastifyRequest) => (request.query as Query).notice;

  return { send, sessionOf, signedIn, after, notice };
}
