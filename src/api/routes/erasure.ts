/**
 * `POST /api/v1/{variant}/customers/{customer_id}/erasure` (erase scope): the partner's request to
 * erase one customer's personal data, through the same erasure as `partner-sync customers erase`
 * (src/privacy/erase.ts); an extension of this service, not in the spec (docs/personal-data.md).
 */
import { eraseCustomers } from '../../privacy/erase.js';
import { VARIANTS } from '../../types.js';
import { requirePartnerAccess } from '../auth.js';
import type { Principal, RouteModule } from '../types.js';

export const erasureRoutes: RouteModule = (app, deps) => {
  for (const variant of VARIANTS) {
    app.post<{ Params: { customer_id: string } }>(`/api/v1/${variant}/customers/:customer_id/erasure`, { onRequest: requirePartnerAccess('erase', variant) }, async (request, reply) => {
      const principal = request.principal as Principal;
      const customerId = request.params.customer_id;
      if (customerId === '' || customerId.length > 255) return reply.code(400).send({ error: 'invalid_request', message: 'customer_id must be 1 to 255 characters' });
      const [result] = await eraseCustomers(deps.store, { partner: principal.partner, customers: [customerId], by: `api:${principal.clientId}`, via: 'api' });
      return reply.send({ customer_id: customerId, found: result!.found, erased: true, tables: result!.tables, request_id: request.id });
    });
  }
};
