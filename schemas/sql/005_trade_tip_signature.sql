-- The signature of a bundle trade's tip transfer, written before anything is sent (the bundle
-- submitter signs the tip transaction first). A redelivered bundle trade settled from the chain
-- reads the swap and the tip transaction back, so its actual_profit includes the tip and the tip
-- transaction's fee, as the first settlement's does. Null for direct and paper trades.

ALTER TABLE trade_submissions ADD COLUMN tip_signature varchar(88);
