-- A prop-trading firm's database replica, as read by config/partners/replica-prop.yaml: its own
-- tables and column names (accounts, payments, trades), not the spec's. SQLite, standing in for
-- the firm's MariaDB replica in the demo and tests:
--
--   sqlite3 data/replica-prop.sqlite < samples/replica/prop-replica.sql
--   REPLICA_PROP_URL=sqlite:data/replica-prop.sqlite
--
-- Dates are relative to when the file is applied (date('now', ...), UTC), so the rows always fall
-- within the last ten days: a first run reads customers and transactions of the last 30 days and
-- activity of the previous closed day and the two before it. Times are anchored at midnight UTC,
-- so applying the file twice on one day gives the same rows. Date-times are DATETIME text as
-- MariaDB writes them, zone-less (UTC, source.timezone), some with microseconds.
--
-- Deliberately bad rows, to show rejects: account PF-10009 has stage DEMO (no spec phase),
-- payment PAY-5013 has kind CHARGEBACK (no spec transaction type), and trade 24 has a negative
-- volume (negative lots on its day).

DROP TABLE IF EXISTS trades;
DROP TABLE IF EXISTS payments;
DROP TABLE IF EXISTS accounts;

-- Trader accounts; updated_at is set on every insert and update (the customers cursor).
CREATE TABLE accounts (
  account_id   VARCHAR(32)    NOT NULL PRIMARY KEY,
  email        VARCHAR(255),
  first_name   VARCHAR(100),
  last_name    VARCHAR(100),
  country      CHAR(2),
  plan         VARCHAR(40)    NOT NULL,            -- the challenge bought
  stage        VARCHAR(16)    NOT NULL,            -- P1, P2, FUNDED, BREACHED
  balance_usd  DECIMAL(14, 2) NOT NULL,            -- the account size
  ib_code      VARCHAR(32),                        -- the introducing broker (affiliate)
  created_at   DATETIME       NOT NULL,
  updated_at   DATETIME       NOT NULL
);
CREATE INDEX accounts_updated ON accounts (updated_at, account_id);

-- Money in and out, amounts in cents; updated_at changes with the state (approved → reversed).
CREATE TABLE payments (
  payment_id   VARCHAR(32)    NOT NULL PRIMARY KEY,
  account_id   VARCHAR(32)    NOT NULL REFERENCES accounts (account_id),
  kind         VARCHAR(16)    NOT NULL,            -- CHALLENGE, RESET, PAYOUT, REFUND
  amount_cents INTEGER        NOT NULL,
  currency     CHAR(3)        NOT NULL,
  paid_at      DATETIME       NOT NULL,
  state        VARCHAR(16)    NOT NULL,            -- pending, approved, declined, reversed
  updated_at   DATETIME       NOT NULL
);
CREATE INDEX payments_updated ON payments (updated_at, payment_id);

-- Closed trades; volume in hundredths of a lot (MT4 style: 150 = 1.5 lots), profit in cents.
CREATE TABLE trades (
  trade_id     INTEGER        NOT NULL PRIMARY KEY,
  account_id   VARCHAR(32)    NOT NULL REFERENCES accounts (account_id),
  symbol       VARCHAR(16)    NOT NULL,
  volume       INTEGER        NOT NULL,
  profit_cents INTEGER        NOT NULL,
  currency     CHAR(3)        NOT NULL,
  opened_at    DATETIME       NOT NULL,
  closed_at    DATETIME       NOT NULL
);
CREATE INDEX trades_closed ON trades (closed_at);

INSERT INTO accounts (account_id, email, first_name, last_name, country, plan, stage, balance_usd, ib_code, created_at, updated_at) VALUES
  ('PF-10001', 'ana.ruiz@example.com',     'Ana',    'Ruiz',     'ES', '2-step 100K', 'P1',       100000.00, 'IB-1001',
     datetime('now', 'start of day', '-9 days', '+08:12:05'),
     strftime('%Y-%m-%d %H:%M:%f', 'now', 'start of day', '-9 days', '+08:12:05.125') || '431'),
  ('PF-10002', 'li.wei@example.com',       'Li',     'Wei',      'SG', '2-step 50K',  'P2',        50000.00, 'IB-1001',
     datetime('now', 'start of day', '-8 days', '+02:40:00'),
     strftime('%Y-%m-%d %H:%M:%f', 'now', 'start of day', '-2 days', '+14:03:11.500') || '217'),
  ('PF-10003', 'tom.becker@example.com',   'Tom',    'Becker',   'DE', '1-step 200K', 'FUNDED',   200000.00, 'IB-1002',
     datetime('now', 'start of day', '-8 days', '+19:55:41'),
     datetime('now', 'start of day', '-1 days', '+09:30:00')),
  ('PF-10004', 'sara.k@example.com',       'Sara',   'Kowalski', 'PL', '2-step 25K',  'BREACHED',  25000.00, 'IB-1003',
     datetime('now', 'start of day', '-7 days', '+11:00:00'),
     strftime('%Y-%m-%d %H:%M:%f', 'now', 'start of day', '-3 days', '+16:45:59.999') || '999'),
  ('PF-10005', 'm.dubois@example.com',     'Marc',   'Dubois',   'FR', '2-step 100K', 'P1',       100000.00, 'IB-1002',
     datetime('now', 'start of day', '-6 days', '+07:07:07'),
     datetime('now', 'start of day', '-6 days', '+07:07:07')),
  ('PF-10006', 'j.okafor@example.com',     'James',  'Okafor',   'NG', 'instant 10K', 'FUNDED',    10000.00, 'IB-1002',
     datetime('now', 'start of day', '-5 days', '+21:14:00'),
     datetime('now', 'start of day', '-2 days', '+06:00:00')),
  ('PF-10007', 'e.rossi@example.com',      'Elena',  'Rossi',    'IT', '2-step 50K',  'P1',        50000.00, 'IB-1003',
     datetime('now', 'start of day', '-4 days', '+13:20:00'),
     strftime('%Y-%m-%d %H:%M:%f', 'now', 'start of day', '-4 days', '+13:20:00.000') || '001'),
  ('PF-10008', 'k.tanaka@example.com',     'Kenji',  'Tanaka',   'JP', '1-step 100K', 'P2',       100000.00, 'IB-1001',
     datetime('now', 'start of day', '-3 days', '+01:05:00'),
     datetime('now', 'start of day', '-1 days', '+22:10:30')),
  -- Bad: stage DEMO is not a phase of the spec (phase_1, phase_2, funded, failed): rejected.
  ('PF-10009', 'demo.user@example.com',    'Demo',   'User',     'GB', '2-step 10K',  'DEMO',      10000.00, 'IB-1002',
     datetime('now', 'start of day', '-2 days', '+10:00:00'),
     datetime('now', 'start of day', '-2 days', '+10:00:00')),
  ('PF-10010', 'p.silva@example.com',      'Paula',  'Silva',    'BR', '2-step 100K', 'P1',       100000.00, 'IB-1003',
     datetime('now', 'start of day', '-1 days', '+17:45:12'),
     strftime('%Y-%m-%d %H:%M:%f', 'now', 'start of day', '-1 days', '+17:45:12.345') || '678');

INSERT INTO payments (payment_id, account_id, kind, amount_cents, currency, paid_at, state, updated_at) VALUES
  ('PAY-5001', 'PF-10001', 'CHALLENGE', 54900, 'USD',
     datetime('now', 'start of day', '-9 days', '+08:15:00'), 'approved',
     datetime('now', 'start of day', '-9 days', '+08:15:02')),
  ('PAY-5002', 'PF-10002', 'CHALLENGE', 34500, 'USD',
     datetime('now', 'start of day', '-8 days', '+02:41:10'), 'approved',
     datetime('now', 'start of day', '-8 days', '+02:41:11')),
  ('PAY-5003', 'PF-10003', 'CHALLENGE', 108000, 'USD',
     strftime('%Y-%m-%d %H:%M:%f', 'now', 'start of day', '-8 days', '+19:56:00.120') || '499', 'approved',
     strftime('%Y-%m-%d %H:%M:%f', 'now', 'start of day', '-8 days', '+19:56:00.120') || '501'),
  ('PAY-5004', 'PF-10004', 'CHALLENGE', 15500, 'USD',
     datetime('now', 'start of day', '-7 days', '+11:02:00'), 'approved',
     datetime('now', 'start of day', '-7 days', '+11:02:00')),
  ('PAY-5005', 'PF-10004', 'RESET', 9900, 'USD',
     datetime('now', 'start of day', '-4 days', '+09:00:00'), 'approved',
     datetime('now', 'start of day', '-4 days', '+09:00:00')),
  -- Approved, then reversed three days later: the change column moves, the row is read again.
  ('PAY-5006', 'PF-10005', 'CHALLENGE', 54900, 'USD',
     datetime('now', 'start of day', '-6 days', '+07:10:00'), 'reversed',
     strftime('%Y-%m-%d %H:%M:%f', 'now', 'start of day', '-3 days', '+12:00:00.000') || '251'),
  ('PAY-5007', 'PF-10006', 'CHALLENGE', 9900, 'USD',
     datetime('now', 'start of day', '-5 days', '+21:15:00'), 'approved',
     datetime('now', 'start of day', '-5 days', '+21:15:00')),
  ('PAY-5008', 'PF-10003', 'PAYOUT', 412575, 'USD',
     datetime('now', 'start of day', '-2 days', '+15:30:00'), 'pending',
     datetime('now', 'start of day', '-2 days', '+15:30:00')),
  ('PAY-5009', 'PF-10003', 'PAYOUT', 412575, 'USD',
     datetime('now', 'start of day', '-2 days', '+15:30:00'), 'approved',
     strftime('%Y-%m-%d %H:%M:%f', 'now', 'start of day', '-1 days', '+10:00:00.750') || '004'),
  ('PAY-5010', 'PF-10007', 'CHALLENGE', 34500, 'USD',
     datetime('now', 'start of day', '-4 days', '+13:21:00'), 'approved',
     datetime('now', 'start of day', '-4 days', '+13:21:00')),
  ('PAY-5011', 'PF-10008', 'CHALLENGE', 49900, 'USD',
     datetime('now', 'start of day', '-3 days', '+01:06:00'), 'approved',
     datetime('now', 'start of day', '-3 days', '+01:06:00')),
  ('PAY-5012', 'PF-10006', 'REFUND', 9900, 'USD',
     datetime('now', 'start of day', '-1 days', '+08:00:00'), 'approved',
     datetime('now', 'start of day', '-1 days', '+08:00:00')),
  -- Bad: kind CHARGEBACK is not mapped to a spec transaction type: rejected.
  ('PAY-5013', 'PF-10002', 'CHARGEBACK', 34500, 'USD',
     datetime('now', 'start of day', '-1 days', '+11:11:11'), 'approved',
     datetime('now', 'start of day', '-1 days', '+11:11:11')),
  ('PAY-5014', 'PF-10010', 'CHALLENGE', 54900, 'USD',
     datetime('now', 'start of day', '-1 days', '+17:46:00'), 'approved',
     strftime('%Y-%m-%d %H:%M:%f', 'now', 'start of day', '-1 days', '+17:46:00.000') || '123');

INSERT INTO trades (trade_id, account_id, symbol, volume, profit_cents, currency, opened_at, closed_at) VALUES
  ( 1, 'PF-10001', 'EURUSD', 200,   15230, 'USD', datetime('now', 'start of day', '-6 days', '+08:00:00'), datetime('now', 'start of day', '-6 days', '+09:30:00')),
  ( 2, 'PF-10001', 'EURUSD', 100,   -4210, 'USD', datetime('now', 'start of day', '-6 days', '+10:00:00'), datetime('now', 'start of day', '-6 days', '+11:45:00')),
  ( 3, 'PF-10002', 'XAUUSD',  50,    8800, 'USD', datetime('now', 'start of day', '-5 days', '+13:00:00'), datetime('now', 'start of day', '-5 days', '+15:10:00')),
  ( 4, 'PF-10003', 'US30',   300,  -22150, 'USD', datetime('now', 'start of day', '-5 days', '+14:30:00'), datetime('now', 'start of day', '-5 days', '+16:00:00')),
  ( 5, 'PF-10001', 'XAUUSD', 150,   31005, 'USD', datetime('now', 'start of day', '-3 days', '+07:15:00'), strftime('%Y-%m-%d %H:%M:%f', 'now', 'start of day', '-3 days', '+08:02:13.250') || '111'),
  ( 6, 'PF-10001', 'XAUUSD',  50,   -1005, 'USD', datetime('now', 'start of day', '-3 days', '+09:00:00'), datetime('now', 'start of day', '-3 days', '+09:20:00')),
  ( 7, 'PF-10002', 'EURUSD', 400,   12000, 'USD', datetime('now', 'start of day', '-3 days', '+10:00:00'), datetime('now', 'start of day', '-3 days', '+12:00:00')),
  ( 8, 'PF-10003', 'US30',   200,   45075, 'USD', datetime('now', 'start of day', '-3 days', '+13:30:00'), datetime('now', 'start of day', '-3 days', '+14:00:00')),
  ( 9, 'PF-10003', 'BTCUSD',  10,   -8800, 'USD', datetime('now', 'start of day', '-3 days', '+20:00:00'), datetime('now', 'start of day', '-3 days', '+23:59:59')),
  (10, 'PF-10005', 'EURUSD', 100,     950, 'USD', datetime('now', 'start of day', '-3 days', '+08:00:00'), datetime('now', 'start of day', '-3 days', '+08:45:00')),
  (11, 'PF-10001', 'EURUSD', 250,   -6075, 'USD', datetime('now', 'start of day', '-2 days', '+07:00:00'), datetime('now', 'start of day', '-2 days', '+07:50:00')),
  (12, 'PF-10002', 'XAUUSD', 100,   22010, 'USD', datetime('now', 'start of day', '-2 days', '+09:10:00'), datetime('now', 'start of day', '-2 days', '+11:00:00')),
  (13, 'PF-10002', 'XAUUSD', 100,  -11005, 'USD', datetime('now', 'start of day', '-2 days', '+12:00:00'), datetime('now', 'start of day', '-2 days', '+12:30:00')),
  (14, 'PF-10003', 'US30',   500,   90000, 'USD', datetime('now', 'start of day', '-2 days', '+14:00:00'), datetime('now', 'start of day', '-2 days', '+16:30:00')),
  (15, 'PF-10006', 'EURUSD',  20,     310, 'USD', datetime('now', 'start of day', '-2 days', '+05:00:00'), datetime('now', 'start of day', '-2 days', '+05:30:00')),
  (16, 'PF-10007', 'BTCUSD',   5,    4400, 'USD', datetime('now', 'start of day', '-2 days', '+18:00:00'), strftime('%Y-%m-%d %H:%M:%f', 'now', 'start of day', '-2 days', '+19:00:00.500') || '001'),
  (17, 'PF-10001', 'EURUSD', 150,    7725, 'USD', datetime('now', 'start of day', '-1 days', '+08:00:00'), datetime('now', 'start of day', '-1 days', '+08:40:00')),
  (18, 'PF-10001', 'XAUUSD', 100,   -2550, 'USD', datetime('now', 'start of day', '-1 days', '+09:00:00'), datetime('now', 'start of day', '-1 days', '+10:15:00')),
  (19, 'PF-10003', 'US30',   200,  -13300, 'USD', datetime('now', 'start of day', '-1 days', '+13:30:00'), datetime('now', 'start of day', '-1 days', '+15:00:00')),
  (20, 'PF-10005', 'EURUSD', 300,   18090, 'USD', datetime('now', 'start of day', '-1 days', '+10:00:00'), datetime('now', 'start of day', '-1 days', '+11:00:00')),
  (21, 'PF-10007', 'BTCUSD',  10,   -9920, 'USD', datetime('now', 'start of day', '-1 days', '+16:00:00'), datetime('now', 'start of day', '-1 days', '+17:30:00')),
  (22, 'PF-10008', 'XAUUSD', 200,   26400, 'USD', datetime('now', 'start of day', '-1 days', '+06:00:00'), datetime('now', 'start of day', '-1 days', '+07:00:00')),
  (23, 'PF-10010', 'EURUSD',  50,    1200, 'USD', datetime('now', 'start of day', '-1 days', '+18:00:00'), datetime('now', 'start of day', '-1 days', '+18:20:00')),
  -- Bad: a negative volume (a broken import at the firm); its day's lots_traded is negative: rejected.
  (24, 'PF-10008', 'US30',   -50,    -700, 'USD', datetime('now', 'start of day', '-1 days', '+20:00:00'), datetime('now', 'start of day', '-1 days', '+20:05:00')),
  -- Opened yesterday, closed today: today is not a closed day yet, so it is read tomorrow.
  (25, 'PF-10003', 'BTCUSD',  10,    5100, 'USD', datetime('now', 'start of day', '-1 days', '+23:00:00'), datetime('now', 'start of day', '+00:00:30'));
