-- The journal of wallet transfers (rebalancing), which makes them idempotent.
--
-- A transfer is signed first, then written here with its signature, its signed bytes and the last
-- block height its blockhash is valid for, and only then sent. Whatever happens after (crash,
-- timeout, lost answer), the next run finds the row and asks the chain about that signature
-- instead of paying again: landed → confirmed (and recorded in wallet_transactions in the same
-- database transaction); failed on chain → failed; unknown and still valid → the same signed bytes
-- are sent again (one signature lands at most once); unknown past its last valid block height →
-- expired, and only then may a new transfer be planned.

CREATE TABLE wallet_transfers (
    id                      uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    signature               varchar(88) NOT NULL UNIQUE,
    from_wallet_id          uuid NOT NULL REFERENCES wallets (id),
    to_wallet_id            uuid NOT NULL REFERENCES wallets (id),
    token                   varchar(44) NOT NULL,
    amount                  numeric(20, 0) NOT NULL
                            CONSTRAINT wallet_transfers_amount_check CHECK (amount > 0 AND amount < 18446744073709551616),
    reason                  varchar(20) NOT NULL CONSTRAINT wallet_transfers_reason_check CHECK (reason IN ('top_up', 'return_excess')),
    transaction             text NOT NULL,
    last_valid_block_height bigint NOT NULL,
    status                  varchar(20) NOT NULL DEFAULT 'signed'
                            CONSTRAINT wallet_transfers_status_check CHECK (status IN ('signed', 'confirmed', 'failed', 'expired')),
    slot                    bigint,
    error                   text,
    created_at              timestamptz NOT NULL DEFAULT now(),
    updated_at              timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX idx_wallet_transfers_open ON wallet_transfers (created_at) WHERE status = 'signed';
