/**
 * `flashLoan.reserves` (issue 27 item 3), shared by the planner and the executor: the Kamino Lending
 * reserves an arbitrage may borrow its input from, one per mint. The planner sizes a cycle from a
 * reserve's mint up to what the reserve can lend and charges its fee; the executor wraps the trade in
 * that reserve's borrow and repay. Empty: no flash loans, arbitrage is funded by the worker wallets.
 * Each address is read from the chain at start (engine/lending loadFlashLoanReserves): one that is not
 * a klend Reserve, has flash loans disabled, or lends a mint another one lends is refused, naming
 * this setting.
 */
import { setting } from './loader.js';
import { SettingIssue, uniqueList, type SettingParser } from './setting-types.js';

const BASE58_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

function address(): SettingParser<string> {
  return (raw) => {
    if (typeof raw !== 'string' || !BASE58_ADDRESS.test(raw)) throw new SettingIssue(`expected a base58 account address, got ${JSON.stringify(raw)}`);
    return raw;
  };
}

export const flashLoanSchema = {
  'flashLoan.reserves': setting({
    description: 'Kamino Lending reserve accounts an arbitrage borrows its input from (flash loan, one reserve per mint); empty: arbitrage uses the worker wallets\' own balance',
    parse: uniqueList(address()),
    default: [] as string[],
    env: 'FLASH_LOAN_RESERVES',
    flag: 'flash-loan-reserves',
  }),
};
