/** The columns of the report facts (migration 007), shared by the code that writes and reads them. */

/** Transaction types the report sums (approved ones only). */
export const REPORT_TX_TYPES = ['deposit', 'withdrawal', 'bonus', 'challenge_fee', 'reset_fee', 'refund', 'payout'] as const;

/** Decimal columns of report_cells, and the transaction type each sums (activity columns: none). */
export const MONEY_COLUMNS = ['ftd_usd', 'deposits_usd', 'withdrawals_usd', 'bonuses_usd', 'bets_usd', 'ggr_usd', 'ngr_usd',
  'challenge_fees_usd', 'reset_fees_usd', 'refunds_usd', 'payouts_usd'] as const;
export const COUNT_COLUMNS = ['registrations', 'ftd_count', 'depositors', 'deposit_count', 'challenge_purchases', 'unconverted_tx', 'unconverted_activity', 'unconverted_ftd'] as const;
export type MoneyColumn = (typeof MONEY_COLUMNS)[number];
export type CountColumn = (typeof COUNT_COLUMNS)[number];
