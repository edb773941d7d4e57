-- What a real trade actually filled (issue 27): the input mint the wallet spent and the output mint
-- it received in the landed transaction(s), from the wallet's balance changes (the ExecutionResult's
-- filledInput / filledOutput), written with the trade's final status, by the executor's first
-- settlement or by a redelivery's settlement from the chain. trade_routes keeps the amounts the
-- transaction was built for; the pool may have moved between build and land (anything down to
-- minimumOutput lands), so realized P&L (engine/planner/strategy-pnl.ts) reads these when present.
--
-- Null: paper trades (their route rows are the simulated fill), trades that never landed (expired,
-- refused), cycles whose input and output are one mint (arbitrage: its P&L is actual_profit), and
-- rows written before this migration. numeric(20,0): a u64 amount may pass bigint's 2^63-1.
ALTER TABLE trades ADD COLUMN landed_input_amount numeric(20,0) CONSTRAINT trades_landed_input_amount_check CHECK (landed_input_amount >= 0);
ALTER TABLE trades ADD COLUMN landed_output_amount numeric(20,0) CONSTRAINT trades_landed_output_amount_check CHECK (landed_output_amount >= 0);
