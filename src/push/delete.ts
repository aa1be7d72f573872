/**
 * A pushed delete (DELETE /api/v1/{variant}/{customers|transactions}/{id}, our extension of the
 * spec: docs/api.md): the record moves to a tombstone through the Loader's one load path
 * (Loader.remove), so the after-load jobs take back what it counted for exactly as after a pulled
 * delete, evaluated behind the commit as a push is. The Idempotency-Key's answer is saved in the
 * same transaction. A repeated delete answers `already_deleted`; an id the store never held is a
 * 404 and is not remembered (nothing was written).
 */
import type { Loader } from '../pipeline/load.js';
import { Run } from '../pipeline/run.js';
import type { Variant } from '../types.js';
import { newRequestId } from './group-commit.js';
import { saveAnswer } from './store.js';

export interface DeleteRequest {
  partner: string;
  variant: Variant;
  entity: 'customers' | 'transactions';
  id: string;
  clientId: string;
  idempotency?: { key: string; requestHash: string };
}

export interface DeleteReply {
  status: number;
  body: Record<string, unknown>;
}

const WORD = { customers: 'customer', transactions: 'transaction' } as const;

/** Deletes one record of the partner, answered at the commit; the jobs evaluate behind it. */
export async function deleteRecord(loader: Loader, request: DeleteRequest): Promise<DeleteReply> {
  const requestId = newRequestId();
  const run = Run.unrecorded(loader, `delete-${requestId}`, 'behind');
  try {
    return await loader.transaction(async (tx) => {
      const r = await tx.remove({ partner: request.partner, variant: request.variant, entity: request.entity, ids: [request.id], learnedVia: 'push', runId: run.id });
      if (r.unknown.length > 0) {
        return { status: 404, body: { error: 'not_found', message: `no ${WORD[request.entity]} ${JSON.stringify(request.id)} of partner ${request.partner}` } };
      }
      const answer: DeleteReply = r.held ? { status: 202, body: { held: true, hold_id: r.held.holdId, reason: r.held.reason, request_id: requestId } } : {
        status: 200,
        body: {
          deleted: r.deleted, waiting: r.waiting, already_deleted: r.alreadyDeleted.length > 0,
          // What went with a customer, for the money (its transactions and activity rows).
          ...(request.entity === 'customers' ? { cascaded: { transactions: r.rows.transactions.length, activity: r.rows.activity.length } } : {}),
          request_id: requestId,
        },
      };
      const idempotency = request.idempotency;
      if (idempotency) await tx.run((trx) => saveAnswer(trx, request.clientId, idempotency.key, { requestHash: idempotency.requestHash, status: answer.status, body: answer.body }, loader.store.now()));
      return answer;
    });
  } finally {
    await run.settle();
  }
}
