import { describe, expect, it } from 'vitest';

import { generateKeypair } from '../chain/index.js';
import { ExecutionPath } from '../messages/index.js';
import { SubmissionRun, type PathStatus, type SubmissionPath } from './submission-run.js';
import type { SubmissionOutcome, TradeSubmission } from './submission.js';

/**
 * The run's order of sends and status polls, on a path whose send answers when the test says so:
 * no chain, no timing assertions.
 */

const submission: TradeSubmission = {
  opportunityId: 'op-1',
  // The run reads only the signature; the path sends.
  transaction: { signature: 'sig-1', bytes: new Uint8Array(0) } as unknown as TradeSubmission['transaction'],
  blockhash: 'blockhash',
  lastValidBlockHeight: 1_000n,
  wallet: generateKeypair(),
  mints: [],
};

/** A path whose send answers on `answer()`; status polls record whether the send had answered. */
function controlledPath(): { path: SubmissionPath; sent: Promise<void>; answer: () => void; polls: { sendAnswered: boolean }[] } {
  let answered = false;
  let answer!: () => void;
  let sentNow!: () => void;
  const sent = new Promise<void>((r) => (sentNow = r));
  const polls: { sendAnswered: boolean }[] = [];
  const confirmed = (run: { attempts: number; submittedAt: number | undefined }): Promise<SubmissionOutcome> =>
    Promise.resolve({ path: ExecutionPath.Direct, signature: 'sig-1', attempts: run.attempts, status: 'confirmed', submittedAt: run.submittedAt ?? 0, confirmedAt: 0, slot: 1n, balanceChanges: { lamports: 0n, tokens: new Map(), fee: 0n } });
  const path: SubmissionPath = {
    path: ExecutionPath.Direct,
    send: () => {
      sentNow();
      return new Promise<void>((r) => (answer = () => {
        answered = true;
        r();
      }));
    },
    status: (): Promise<PathStatus> => {
      polls.push({ sendAnswered: answered });
      return Promise.resolve(answered ? { kind: 'final', settle: confirmed } : { kind: 'unknown' });
    },
    lastLook: () => Promise.resolve({ kind: 'unknown' }),
    ids: () => ({}),
    refusedError: (m) => `refused: ${m}`,
    blockhashExpiredError: () => 'expired',
    timeoutError: () => 'timeout',
  };
  return { path, sent, answer: () => answer(), polls };
}

function runOn(path: SubmissionPath, pollMs: number): Promise<SubmissionOutcome> {
  const settings = { chain: { getBlockHeight: () => Promise.resolve(0n) }, pollMs, resendInitialMs: 250, resendMaxMs: 2_000, defaultTimeoutMs: 30_000, logger: undefined };
  return new SubmissionRun(settings, submission, path, {}).run();
}

describe('SubmissionRun', () => {
  it('asks the status once the send answered, not beside it (issue 23)', async () => {
    const { path, sent, answer, polls } = controlledPath();
    // The send answers at once, well within the poll interval: the first poll comes after it.
    const outcome = runOn(path, 1_000);
    await sent;
    answer();
    expect((await outcome).status).toBe('confirmed');
    expect(polls.length).toBeGreaterThan(0);
    expect(polls.every((p) => p.sendAnswered)).toBe(true);
  });

  it('still polls after a poll interval while the send hangs, so a landed trade is seen', async () => {
    const { path, sent, polls } = controlledPath();
    let landed = false;
    const status = path.status.bind(path);
    path.status = async () => {
      const s = await status();
      // The chain shows it landed although the send never answered (its answer was lost).
      return landed ? { kind: 'final', settle: (run) => Promise.resolve({ path: ExecutionPath.Direct, signature: 'sig-1', attempts: run.attempts, status: 'confirmed', submittedAt: run.submittedAt ?? 0, confirmedAt: 0, slot: 1n, balanceChanges: { lamports: 0n, tokens: new Map(), fee: 0n } }) } : s;
    };
    const outcome = runOn(path, 20);
    await sent;
    landed = true;
    const o = await outcome;
    expect(o).toMatchObject({ status: 'confirmed', attempts: 1 });
    expect(polls[0]?.sendAnswered).toBe(false);
  });
});
