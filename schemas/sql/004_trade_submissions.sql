-- The executor's journal of its trades, beside spec 03's `trades` row: which opportunity a trade
-- executes, on which path, and the signed swap transaction with the last block height its
-- blockhash is valid for.
--
-- The executor signs the swap first, then writes the `trades` row (status pending, with its
-- signature), its `trade_routes` and this row in one database transaction, and only then sends.
-- An opportunity delivered again (the executor crashed, the RPC failed mid-trade, the database was
-- down when the outcome was to be written) finds its trade here by `opportunity_id` and is never
-- executed a second time: the executor asks the chain about the recorded signature instead (landed
-- → confirmed or failed; unknown past last_valid_block_height → expired).
--
-- Paper trades have a row too: paper true, the path the real trade would have taken, no
-- transaction.

CREATE TABLE trade_submissions (
    trade_id                uuid PRIMARY KEY REFERENCES trades (id) ON DELETE CASCADE,
    opportunity_id          uuid NOT NULL UNIQUE,
    executor_id             varchar(50) NOT NULL,
    path                    varchar(10) NOT NULL CONSTRAINT trade_submissions_path_check CHECK (path IN ('bundle', 'direct')),
    paper                   boolean NOT NULL DEFAULT false,
    profit_mint             varchar(44) NOT NULL,
    tip                     bigint NOT NULL DEFAULT 0 CHECK (tip >= 0),
    fees                    bigint CHECK (fees >= 0),
    transaction             text,
    last_valid_block_height bigint,
    bundle_id               varchar(128),
    submitted_at            timestamptz,
    created_at              timestamptz NOT NULL DEFAULT now()
);
