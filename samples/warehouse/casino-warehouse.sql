-- An iGaming operator's data warehouse, as read by config/partners/warehouse-casino.yaml: three
-- reporting views (dw_players, dw_payments, dw_daily_gaming) over the warehouse's own tables, each
-- with a UTC day column the connector reads by (modified_day, date). SQLite, standing in for the
-- operator's PostgreSQL warehouse in the demo and tests:
--
--   sqlite3 data/warehouse-casino.sqlite < samples/warehouse/casino-warehouse.sql
--   WAREHOUSE_CASINO_URL=sqlite:data/warehouse-casino.sqlite
--
-- Dates are relative to when the file is applied (date('now', ...), UTC), so the rows always fall
-- within the last ten days; times are anchored at midnight UTC, so applying the file twice on one
-- day gives the same rows. A run reads closed days only: the previous day and late_days (2) before
-- it. Rows of today wait for tomorrow; rows older than three days are read by a backfill.
--
-- Deliberately bad rows, to show rejects: player P-1007 has an email that is not one, payment
-- T-9010 has type CBK (no spec transaction type), and P-1004's slots day on the day before
-- yesterday has negative wins.

DROP VIEW IF EXISTS dw_daily_gaming;
DROP VIEW IF EXISTS dw_payments;
DROP VIEW IF EXISTS dw_players;
DROP TABLE IF EXISTS fact_gaming_day;
DROP TABLE IF EXISTS fact_payment;
DROP TABLE IF EXISTS dim_player;

-- The warehouse's own tables (loaded nightly by the operator's ETL).
CREATE TABLE dim_player (
  player_id      VARCHAR(32)  NOT NULL PRIMARY KEY,
  registered_at  DATETIME     NOT NULL,
  affiliate_code VARCHAR(32)  NOT NULL,
  country        CHAR(2),
  language       VARCHAR(8),
  kyc_state      VARCHAR(16),
  email          VARCHAR(255),
  first_name     VARCHAR(100),
  last_name      VARCHAR(100),
  updated_at     DATETIME     NOT NULL
);

CREATE TABLE fact_payment (
  payment_id     VARCHAR(32)  NOT NULL PRIMARY KEY,
  player_id      VARCHAR(32)  NOT NULL,
  payment_type   VARCHAR(8)   NOT NULL,            -- DEP, WDR, BON, ADJ
  amount_cents   INTEGER      NOT NULL,
  currency       CHAR(3)      NOT NULL,
  created_at     DATETIME     NOT NULL,
  status         VARCHAR(16)  NOT NULL,            -- approved, pending, declined, reversed
  updated_at     DATETIME     NOT NULL
);

CREATE TABLE fact_gaming_day (
  day            DATE         NOT NULL,
  player_id      VARCHAR(32)  NOT NULL,
  product        VARCHAR(32)  NOT NULL,            -- slots, live_casino, table_games, sports
  currency       CHAR(3)      NOT NULL,
  rounds         INTEGER      NOT NULL,
  stake_cents    INTEGER      NOT NULL,
  win_cents      INTEGER      NOT NULL,
  bonus_cents    INTEGER      NOT NULL DEFAULT 0,
  PRIMARY KEY (day, player_id, product, currency)
);

-- The reporting views the connector reads. Each has its UTC day column.
CREATE VIEW dw_players AS
SELECT player_id, registered_at, affiliate_code, country, language, kyc_state, email,
       first_name, last_name, updated_at,
       date(updated_at) AS modified_day
  FROM dim_player;

CREATE VIEW dw_payments AS
SELECT payment_id, player_id, payment_type, amount_cents / 100.0 AS amount, currency,
       created_at, status, updated_at,
       date(updated_at) AS modified_day
  FROM fact_payment;

CREATE VIEW dw_daily_gaming AS
SELECT day AS date, player_id, product AS game_type, currency,
       rounds AS bets_count,
       stake_cents / 100.0 AS total_bets,
       win_cents / 100.0 AS wins,
       (stake_cents - win_cents) / 100.0 AS ggr,
       (stake_cents - win_cents - bonus_cents) / 100.0 AS ngr
  FROM fact_gaming_day;

INSERT INTO dim_player (player_id, registered_at, affiliate_code, country, language, kyc_state, email, first_name, last_name, updated_at) VALUES
  ('P-1001', datetime('now', 'start of day', '-9 days', '+10:04:00'), 'AFF-77', 'MT', 'en', 'verified', 'luca.b@example.com',   'Luca',   'Borg',     datetime('now', 'start of day', '-1 days', '+09:00:00')),
  ('P-1002', strftime('%Y-%m-%d %H:%M:%f', 'now', 'start of day', '-8 days', '+21:30:15.125') || '512',
                                                               'AFF-77', 'DE', 'de', 'verified', 'h.mueller@example.com', 'Hanna',  'Müller',   datetime('now', 'start of day', '-1 days', '+12:30:00')),
  ('P-1003', datetime('now', 'start of day', '-6 days', '+08:00:00'), 'AFF-12', 'FI', 'fi', 'pending',  'v.virtanen@example.com','Veikko', 'Virtanen', datetime('now', 'start of day', '-2 days', '+08:00:00')),
  ('P-1004', datetime('now', 'start of day', '-5 days', '+19:45:00'), 'AFF-12', 'SE', 'sv', 'verified', 'a.lind@example.com',    'Astrid', 'Lind',     strftime('%Y-%m-%d %H:%M:%f', 'now', 'start of day', '-2 days', '+23:59:59.999') || '999'),
  ('P-1005', datetime('now', 'start of day', '-4 days', '+14:10:00'), 'AFF-30', 'NO', 'no', 'none',     'o.haugen@example.com',  'Ola',    'Haugen',   datetime('now', 'start of day', '-3 days', '+00:00:00')),
  ('P-1006', datetime('now', 'start of day', '-3 days', '+16:20:00'), 'AFF-30', 'IE', 'en', 'verified', 'c.byrne@example.com',   'Ciara',  'Byrne',    datetime('now', 'start of day', '-3 days', '+16:25:00')),
  -- Bad: not an email address: rejected (spec format email).
  ('P-1007', datetime('now', 'start of day', '-2 days', '+11:00:00'), 'AFF-77', 'MT', 'mt', 'none',     'not-an-email',          'Marija', 'Camilleri',datetime('now', 'start of day', '-2 days', '+11:00:00')),
  -- Last modified six days ago: read by a backfill, not by the first run.
  ('P-1008', datetime('now', 'start of day', '-7 days', '+09:00:00'), 'AFF-12', 'DK', 'da', 'verified', 's.nielsen@example.com', 'Søren',  'Nielsen',  datetime('now', 'start of day', '-6 days', '+09:00:00')),
  -- Registered today: today is not a closed day, so the player is read tomorrow.
  ('P-1009', datetime('now', 'start of day', '+00:00:10'),            'AFF-30', 'EE', 'et', 'none',     'k.tamm@example.com',    'Kadri',  'Tamm',     datetime('now', 'start of day', '+00:00:10'));

INSERT INTO fact_payment (payment_id, player_id, payment_type, amount_cents, currency, created_at, status, updated_at) VALUES
  ('T-9001', 'P-1001', 'DEP', 5000,   'EUR', datetime('now', 'start of day', '-3 days', '+10:05:00'), 'approved', datetime('now', 'start of day', '-3 days', '+10:05:01')),
  ('T-9002', 'P-1001', 'WDR', 12550,  'EUR', datetime('now', 'start of day', '-1 days', '+18:00:00'), 'pending',  datetime('now', 'start of day', '-1 days', '+18:00:00')),
  ('T-9003', 'P-1002', 'DEP', 20000,  'EUR', strftime('%Y-%m-%d %H:%M:%f', 'now', 'start of day', '-2 days', '+21:31:00.001') || '002', 'approved',
                                                                                                  strftime('%Y-%m-%d %H:%M:%f', 'now', 'start of day', '-2 days', '+21:31:00.001') || '003'),
  ('T-9004', 'P-1002', 'BON', 1000,   'EUR', datetime('now', 'start of day', '-2 days', '+21:35:00'), 'approved', datetime('now', 'start of day', '-2 days', '+21:35:00')),
  -- Approved on day -5, reversed yesterday: its modified_day moves, so the change is read.
  ('T-9005', 'P-1003', 'DEP', 7500,   'EUR', datetime('now', 'start of day', '-5 days', '+08:10:00'), 'reversed', datetime('now', 'start of day', '-1 days', '+07:00:00')),
  ('T-9006', 'P-1004', 'DEP', 10000,  'SEK', datetime('now', 'start of day', '-2 days', '+19:50:00'), 'approved', datetime('now', 'start of day', '-2 days', '+19:50:00')),
  ('T-9007', 'P-1005', 'DEP', 30000,  'NOK', datetime('now', 'start of day', '-3 days', '+14:15:00'), 'approved', datetime('now', 'start of day', '-3 days', '+14:15:00')),
  ('T-9008', 'P-1006', 'DEP', 2500,   'EUR', datetime('now', 'start of day', '-3 days', '+16:30:00'), 'declined', datetime('now', 'start of day', '-3 days', '+16:30:05')),
  ('T-9009', 'P-1006', 'ADJ', 150,    'EUR', datetime('now', 'start of day', '-1 days', '+09:00:00'), 'approved', datetime('now', 'start of day', '-1 days', '+09:00:00')),
  -- Bad: CBK (a chargeback) is not mapped to a spec transaction type: rejected.
  ('T-9010', 'P-1001', 'CBK', 5000,   'EUR', datetime('now', 'start of day', '-1 days', '+20:00:00'), 'approved', datetime('now', 'start of day', '-1 days', '+20:00:00')),
  ('T-9011', 'P-1008', 'DEP', 4000,   'DKK', datetime('now', 'start of day', '-6 days', '+09:05:00'), 'approved', datetime('now', 'start of day', '-6 days', '+09:05:00')),
  ('T-9012', 'P-1009', 'DEP', 1000,   'EUR', datetime('now', 'start of day', '+00:00:20'),            'approved', datetime('now', 'start of day', '+00:00:20'));

INSERT INTO fact_gaming_day (day, player_id, product, currency, rounds, stake_cents, win_cents, bonus_cents) VALUES
  (date('now', '-6 days'), 'P-1008', 'slots',       'DKK',  40,   4000,   3100,    0),
  (date('now', '-3 days'), 'P-1001', 'slots',       'EUR', 320,  48000,  45210,  500),
  (date('now', '-3 days'), 'P-1001', 'live_casino', 'EUR',  12,  10000,   6000,    0),
  (date('now', '-3 days'), 'P-1005', 'sports',      'NOK',   3,  15000,      0,    0),
  (date('now', '-3 days'), 'P-1006', 'slots',       'EUR',  55,   2500,   2730,    0),
  (date('now', '-2 days'), 'P-1001', 'slots',       'EUR', 210,  31500,  29990,    0),
  (date('now', '-2 days'), 'P-1002', 'table_games', 'EUR',  30,  18000,  21050, 1000),
  (date('now', '-2 days'), 'P-1003', 'slots',       'EUR',  80,   6000,   4125,    0),
  -- Bad: negative wins (a correction booked as a negative win): rejected.
  (date('now', '-2 days'), 'P-1004', 'slots',       'SEK',  64,   9600,  -1200,    0),
  (date('now', '-2 days'), 'P-1005', 'sports',      'NOK',   2,  10000,  18500,    0),
  (date('now', '-1 days'), 'P-1001', 'slots',       'EUR', 150,  22500,  20010,    0),
  (date('now', '-1 days'), 'P-1002', 'live_casino', 'EUR',  25,  25000,  31000,    0),
  (date('now', '-1 days'), 'P-1002', 'slots',       'EUR', 400,  40000,  36870,  200),
  (date('now', '-1 days'), 'P-1004', 'slots',       'SEK', 120,  18000,  15120,    0),
  (date('now', '-1 days'), 'P-1006', 'live_casino', 'EUR',   8,   4000,      0,    0),
  (date('now'),            'P-1009', 'slots',       'EUR',  10,   1000,    800,    0);
