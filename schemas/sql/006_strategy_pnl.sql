-- Realized P&L per strategy (issue 27, engine/planner/strategy-pnl.ts).
--
-- trades.strategy keeps the strategy type as spec 03 defines it ('arbitrage', 'grid', ...);
-- strategy_id is the TradeOpportunity's strategyId: the strategy_configs row that produced the
-- trade. Text, not a foreign key: a trade outlives its strategy row (the history stays), and a
-- paper run may name a strategy that has no row (strategyId is any string of 1 to 64 characters).
-- Null for trades written before this migration.
ALTER TABLE trades ADD COLUMN strategy_id varchar(64);
CREATE INDEX idx_trades_strategy_id ON trades (strategy_id);

-- The side of a grid order, as the planner triggered it. Null for rows written before this
-- migration.
ALTER TABLE grid_orders ADD COLUMN side varchar(4) CONSTRAINT grid_orders_side_check CHECK (side IN ('buy', 'sell'));
