import type { StoreMigration } from './migration.js';
import { initial } from './001-initial.js';
import { rejectOrigin } from './002-reject-origin.js';
import { commissions } from './003-commissions.js';
import { versionsAndRejectLifecycle } from './004-versions-and-reject-lifecycle.js';
import { apiClients } from './005-api-clients.js';
import { push } from './006-push.js';
import { reportFacts } from './007-report-facts.js';
import { phaseHistory } from './008-phase-history.js';
import { fraud } from './009-fraud.js';
import { reviewHolds } from './010-review-holds.js';
import { onboarding } from './011-onboarding.js';
import { consoleTables } from './012-console.js';
import { activityPartitions } from './013-activity-partitions.js';
import { consoleIndexes } from './014-console-indexes.js';
import { fraudPending } from './015-fraud-pending.js';
import { reportDepositorCustomers } from './016-report-depositor-customers.js';
import { reportCellsFillfactor } from './017-report-cells-fillfactor.js';
import { reportDepositorDays } from './018-report-depositor-days.js';
import { postbacks } from './019-postbacks.js';
import { fraudDeferred } from './020-fraud-deferred.js';
import { postbackUnsettledIndex } from './021-postback-unsettled-index.js';
import { reportPending } from './022-report-pending.js';
import { dropFraudActiveDays } from './023-drop-fraud-active-days.js';
import { fraudDeferredDays } from './024-fraud-deferred-days.js';
import { missingDaysIndex } from './025-missing-days-index.js';
import { runOwner } from './026-run-owner.js';
import { clientPersonalData } from './027-client-personal-data.js';
import { erasures } from './028-erasures.js';
import { tombstones } from './029-tombstones.js';
import { deleteGuard } from './030-delete-guard.js';
import { flagHeldCommission } from './031-flag-held-commission.js';
import { affiliateUsers } from './032-affiliate-users.js';

export type { StoreMigration } from './migration.js';

/** Every migration, in order. Listed explicitly: no discovery by file name at run time. */
export const MIGRATIONS: readonly StoreMigration[] = [initial, rejectOrigin, commissions, versionsAndRejectLifecycle, apiClients, push, reportFacts, phaseHistory, fraud, reviewHolds, onboarding, consoleTables, activityPartitions, consoleIndexes, fraudPending, reportDepositorCustomers, reportCellsFillfactor, reportDepositorDays, postbacks, fraudDeferred, postbackUnsettledIndex, reportPending, dropFraudActiveDays, fraudDeferredDays, missingDaysIndex, runOwner, clientPersonalData, erasures, tombstones, deleteGuard, flagHeldCommission, affiliateUsers];
