-- tidepool platform state (spec 03 "Relational tables").
--
-- wallets, trades and trade_routes: exactly the spec's columns, types, defaults, keys and indexes.
-- `timestamp` columns are `timestamp without time zone` as the spec writes them; every tidepool
-- session runs with TimeZone=UTC, so they hold UTC.
--
-- Added where the spec is silent, and only there:
--   * ids default to gen_random_uuid(), so an insert may leave them out;
--   * trades.status defaults to 'pending' (spec 03: a trade starts as pending when inserted);
--   * CHECK constraints on the enumerated columns (wallet tier, trade status), so the database
--     refuses a value no tidepool code writes.
--
-- wallet_transactions, strategy_configs, grid_orders, planner_metrics, executor_metrics: the spec
-- lists their columns without types; the types are ours (engine/state/README.md explains them).
-- u64 amounts of those tables are numeric(20,0) (bigint stops at 2^63-1) and checked into range.

CREATE TABLE wallets (
    id                    uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tier                  varchar(20) NOT NULL CONSTRAINT wallets_tier_check CHECK (tier IN ('treasure', 'controller', 'proxy', 'worker')),
    address               varchar(44) NOT NULL UNIQUE,
    encrypted_private_key text NOT NULL,
    expected_balance      jsonb DEFAULT '{}'::jsonb,
    actual_balance        jsonb DEFAULT '{}'::jsonb,
    last_sync             timestamp DEFAULT now(),
    enabled               boolean DEFAULT true,
    created_at            timestamp DEFAULT now()
);
CREATE INDEX idx_wallets_tier ON wallets (tier);
CREATE INDEX idx_wallets_enabled ON wallets (enabled);

CREATE TABLE trades (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    strategy        varchar(50),
    wallet_id       uuid REFERENCES wallets (id),
    signature       varchar(88) UNIQUE,
    expected_profit bigint,
    actual_profit   bigint,
    status          varchar(20) DEFAULT 'pending'
                    CONSTRAINT trades_status_check CHECK (status IN ('pending', 'submitted', 'confirmed', 'failed', 'expired', 'paper')),
    error_message   text,
    created_at      timestamp DEFAULT now(),
    confirmed_at    timestamp,
    slot            bigint
);
CREATE INDEX idx_trades_strategy ON trades (strategy);
CREATE INDEX idx_trades_status ON trades (status);
CREATE INDEX idx_trades_created_at ON trades (created_at DESC);

CREATE TABLE trade_routes (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    trade_id      uuid REFERENCES trades (id) ON DELETE CASCADE,
    step          integer,
    protocol      varchar(50),
    pool          varchar(44),
    input_mint    varchar(44),
    output_mint   varchar(44),
    input_amount  bigint,
    output_amount bigint
);
CREATE INDEX idx_trade_routes_trade_id ON trade_routes (trade_id);

-- One row per wallet per confirmed transfer: amount is signed, + received, - sent; token is a
-- mint address, or 'SOL' for native lamports. Two wallets of one transfer share the signature.
CREATE TABLE wallet_transactions (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    wallet_id   uuid NOT NULL REFERENCES wallets (id),
    signature   varchar(88) NOT NULL,
    amount      numeric(21, 0) NOT NULL
                CONSTRAINT wallet_transactions_amount_check CHECK (amount > -18446744073709551616 AND amount < 18446744073709551616),
    token       varchar(44) NOT NULL,
    "timestamp" timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT wallet_transactions_wallet_signature_key UNIQUE (wallet_id, signature)
);
CREATE INDEX idx_wallet_transactions_wallet_time ON wallet_transactions (wallet_id, "timestamp" DESC);
CREATE INDEX idx_wallet_transactions_signature ON wallet_transactions (signature);

CREATE TABLE strategy_configs (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    strategy_type varchar(50) NOT NULL,
    parameters    jsonb NOT NULL DEFAULT '{}'::jsonb,
    enabled       boolean NOT NULL DEFAULT true,
    last_run      timestamptz
);
CREATE INDEX idx_strategy_configs_type ON strategy_configs (strategy_type);

CREATE TABLE grid_orders (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    strategy_id uuid NOT NULL REFERENCES strategy_configs (id) ON DELETE CASCADE,
    price_level double precision NOT NULL,
    amount      numeric(20, 0) NOT NULL CONSTRAINT grid_orders_amount_check CHECK (amount >= 0 AND amount < 18446744073709551616),
    filled      numeric(20, 0) NOT NULL DEFAULT 0 CONSTRAINT grid_orders_filled_check CHECK (filled >= 0 AND filled <= amount),
    status      varchar(20) NOT NULL DEFAULT 'pending'
                CONSTRAINT grid_orders_status_check CHECK (status IN ('pending', 'partial', 'filled', 'cancelled', 'expired'))
);
CREATE INDEX idx_grid_orders_strategy_status ON grid_orders (strategy_id, status);

CREATE TABLE planner_metrics (
    "timestamp"         timestamptz NOT NULL,
    planner_id          varchar(50) NOT NULL,
    opportunities_found integer NOT NULL CHECK (opportunities_found >= 0),
    avg_profit          double precision,
    PRIMARY KEY (planner_id, "timestamp")
);
CREATE INDEX idx_planner_metrics_time ON planner_metrics ("timestamp" DESC);

CREATE TABLE executor_metrics (
    "timestamp"  timestamptz NOT NULL,
    executor_id  varchar(50) NOT NULL,
    tx_submitted integer NOT NULL CHECK (tx_submitted >= 0),
    success_rate real CHECK (success_rate >= 0 AND success_rate <= 1),
    PRIMARY KEY (executor_id, "timestamp")
);
CREATE INDEX idx_executor_metrics_time ON executor_metrics ("timestamp" DESC);
