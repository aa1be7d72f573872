/**
 * The record routes (spec §4, §7, §8): push one record or a bulk array of records, and list a
 * partner's own records. Pushed records take the load path every source takes (the process's one
 * Loader, so the after-load jobs run after each committed push exactly as after a pull), through
 * the group-commit queue (src/push/). Answers come after the commit.
 *
 *   POST /api/v1/{variant}/{entity}        one record (a JSON object)       write scope
 *   POST /api/v1/{variant}/{entity}/bulk   a JSON array of 1 to 1000        write scope
 *   GET  /api/v1/{variant}/{entity}        page, per_page, cursor, modified_since   read scope
 *   DELETE /api/v1/{variant}/customers/{customer_id}, /transactions/{transaction_id}   write scope
 *        (our extension: the record was deleted at the source; src/push/delete.ts)
 *
 * The path's variant must be the token's (403 otherwise); a token only ever reads and writes the
 * records of its own partner. 200 `{accepted, loaded, waiting, request_id}`: accepted = loaded +
 * waiting + stale (a record older than the stored version of its key is accepted, not applied).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { listRecords, parseListQuery } from '../../push/list.js';
import { PushService, type PushReply } from '../../push/service.js';
import { inSpan, type Attributes } from '../../trace.js';
import { entityTable } from '../../store/tables.js';
import { ENTITIES, VARIANTS, type Entity, type Variant } from '../../types.js';
import type { Principal, RouteModule } from '../types.js';
import { requirePartnerAccess } from '../auth.js';

export const recordRoutes: RouteModule = (app, deps) => {
  const service = new PushService(deps.loader, {
    logger: deps.logger,
    onTransaction: ({ entity, requests, seconds, committed }) => {
      // The metrics module, when the app has it (a test may build the app without it).
      if (!committed || !app.hasDecorator('apiMetrics')) return;
      app.apiMetrics.pushTransactions.observe({ entity }, seconds);
      app.apiMetrics.pushGroupRequests.observe({ entity }, requests);
    },
  });
  app.decorate('push', service);
  // A stopping server commits what is queued before the store closes.
  app.addHook('onClose', async () => service.close());

  // A bulk request whose token is accepted is announced to the group-commit queue before its body
  // is read, so the group being formed waits for it (src/push/group-commit.ts); the announcement
  // ends once the request is queued, or with its answer or abort at the latest.
  const announced = (request: FastifyRequest) => (request as Announced)[ANNOUNCED]?.();
  const announce = (variant: Variant, entity: Entity) => async (request: FastifyRequest) => {
    const principal = request.principal;
    if (principal && principal.variant === variant) (request as Announced)[ANNOUNCED] = service.queue.announce(principal.partner, variant, entity);
  };
  app.addHook('onResponse', async (request) => announced(request));
  app.addHook('onRequestAbort', async (request) => announced(request));

  for (const variant of VARIANTS) {
    for (const entity of ENTITIES) {
      const path = `/api/v1/${variant}/${entity}`;
      const push = (bulk: boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
        const principal = request.principal as Principal;
        const header = request.headers['idempotency-key'];
        const records = bulk ? (Array.isArray(request.body) ? request.body.length : 0) : 1;
        const pending = traced({ partner: principal.partner, stream: entity, variant, 'push.bulk': bulk, 'push.records': records }, () => service.push({
          partner: principal.partner,
          variant,
          entity,
          clientId: principal.clientId,
          body: request.body,
          bulk,
          idempotencyKey: Array.isArray(header) ? header.join(',') : header,
        }));
        // Validated and queued by now (or answered without queueing).
        announced(request);
        const answer = await pending;
        return reply.code(answer.status).send(answer.body);
      };
      app.post(path, { onRequest: requirePartnerAccess('write', variant) }, push(false));
      app.post(`${path}/bulk`, { onRequest: [...requirePartnerAccess('write', variant), announce(variant, entity)] }, push(true));
      app.get(path, { onRequest: requirePartnerAccess('read', variant) }, async (request, reply) => list(request, reply, variant, entity));
      if (entity === 'activity') continue;
      const param = entity === 'customers' ? 'customer_id' : 'transaction_id';
      app.delete(`${path}/:${param}`, { onRequest: requirePartnerAccess('write', variant) }, async (request, reply) => {
        const principal = request.principal as Principal;
        const header = request.headers['idempotency-key'];
        const answer = await traced({ partner: principal.partner, stream: entity, variant, 'push.delete': true }, () => service.remove({
          partner: principal.partner, variant, entity, clientId: principal.clientId,
          id: (request.params as Record<string, string>)[param] as string,
          idempotencyKey: Array.isArray(header) ? header.join(',') : header,
        }));
        return reply.code(answer.status).send(answer.body);
      });
    }
  }

  async function list(request: FastifyRequest, reply: FastifyReply, variant: Variant, entity: Entity) {
    const principal = request.principal as Principal;
    const parsed = parseListQuery((request.query ?? {}) as Record<string, unknown>, entityTable(variant, entity));
    if ('errors' in parsed) {
      return reply.code(422).send({ error: 'invalid_parameter', message: parsed.errors.map((e) => e.message).join('; '), errors: parsed.errors });
    }
    return reply.send(await listRecords(deps.store.knex, principal.partner, variant, entity, parsed.query));
  }
};

/** A pushed request in a `push` span (src/trace.ts), with the status it is answered with; `work` starts at once. */
function traced(attributes: Attributes, work: () => Promise<PushReply>): Promise<PushReply> {
  return inSpan('push', attributes, async (span) => {
    const answer = await work();
    span.setAttribute('http.response.status_code', answer.status);
    if (typeof answer.body.request_id === 'string') span.setAttribute('push.request_id', answer.body.request_id);
    return answer;
  });
}

const ANNOUNCED = Symbol('push-announced');
type Announced = FastifyRequest & { [ANNOUNCED]?: () => void };

declare module 'fastify' {
  interface FastifyInstance {
    /** The push service of this server (its group-commit queue): for figures and tests. */
    push: PushService;
  }
}
