-- Incremental strategy P&L (issue 27, engine/planner/strategy-pnl.ts: StrategyPnlBooks).
--
-- trades.change_xid: the id of the transaction that last inserted or updated the row
-- (pg_current_xact_id(), 64 bits: it never wraps), stamped by a trigger, so no writer can forget
-- it. A reader that noted the oldest transaction still running when it last read
-- (pg_snapshot_xmin(pg_current_snapshot())) reads next only the rows with change_xid at or above
-- it: every transaction below it had ended, so its rows were seen. Transaction ids are handed out
-- in start order, not commit order, which is why the reader keys on the oldest running one and
-- not on the highest id it saw.
--
-- Null for rows written before this migration (a reader's first, full read counts them).
ALTER TABLE trades ADD COLUMN change_xid bigint;

CREATE FUNCTION trades_stamp_change_xid() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.change_xid := pg_current_xact_id()::text::bigint;
  RETURN NEW;
END
$$;

CREATE TRIGGER trades_change_xid BEFORE INSERT OR UPDATE ON trades
  FOR EACH ROW EXECUTE FUNCTION trades_stamp_change_xid();

-- A strategy's changed rows by index; it serves the lookups by strategy_id alone as well.
DROP INDEX idx_trades_strategy_id;
CREATE INDEX idx_trades_strategy_id_change_xid ON trades (strategy_id, change_xid);
