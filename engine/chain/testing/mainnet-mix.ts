/**
 * A seeded generator of entry batches that look like mainnet traffic, for benchmarks and tests:
 * - vote-like transactions: legacy, one signer, one Vote-program instruction (~300-400 bytes);
 * - swaps: mostly v0 with 1-3 address-table lookups, compute-budget instructions, a token-account
 *   setup and a DEX instruction with 10-20 accounts, some legacy, ~400-1232 bytes (a few at the
 *   1232-byte limit, like multi-hop routes);
 * - ticks (entries without transactions) between transaction entries.
 * A chosen fraction of the transactions puts one of the given pool keys among its static keys.
 *
 * Signing every transaction would dominate generation time, so a few templates are built and
 * signed once with transaction-builder.ts, and each generated transaction is a copy of a template
 * with fresh random signature bytes, fee payer and accounts patched in. Those signatures do not
 * verify: the batches are for parsing and filtering, not for a validator.
 */
import * as base58 from '../base58.js';
import { encodeEntries, type EntryInput } from '../entry-encoder.js';
import { EntryBatchIndex } from '../entry-batch-index.js';
import { ParseStatus, PUBKEY_BYTES, SIGNATURE_BYTES, TX_START } from '../parse-layout.js';
import { buildTransaction, keypairFromSeed, type InstructionInput, type LookupTableInput, type TransactionInput } from '../transaction-builder.js';
import { Prng } from '../../prng.js';

export const VOTE_PROGRAM = 'Vote111111111111111111111111111111111111111';
export const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';
export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const ATA_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH2v5syqXbTvU64';
export const SYSTEM_PROGRAM = '11111111111111111111111111111111';
const DEX_PROGRAMS = [
  '675kPX9MHTjS2zt1qfr1NYHuzeLXfQM9H24wFSUt1Mp8',
  'CAMMCzo5YL8w4VFF8KVHrK22GGUsp5VTaW7grrKgrWqK',
  'LBUZKhRxPF3XUpBCjp4YzTKgLccjZhTSDM9YuVaPwxo',
  'whirLbMiicVdio4qvUfM5KAg6Ct8VwpYzGff3uctyCc',
];

export interface MainnetMixOptions {
  seed?: number;
  /** Transactions in the batch. */
  transactions: number;
  /** Pool keys (base58 or 32 bytes) that some transactions reference. */
  poolKeys?: readonly (string | Uint8Array)[];
  /** Fraction of transactions referencing a pool key (default 0.2; needs poolKeys). */
  poolFraction?: number;
  /** Fraction of vote-like transactions among those not referencing a pool (default 0.6). */
  voteFraction?: number;
  /** Average transactions per non-tick entry (default 8). */
  txsPerEntry?: number;
  /** Ticks per transaction entry (default 0.25). */
  ticksPerEntry?: number;
}

export interface MainnetMix {
  bytes: Uint8Array;
  entryCount: number;
  txCount: number;
  /** Payload-order indexes of the transactions that reference a pool key. */
  poolTxIndexes: number[];
  /** For each of those, the index (into poolKeys) of the pool it references. */
  poolKeyIndexes: number[];
}

interface Template {
  bytes: Uint8Array;
  /** Offset of the fee payer key (static key 0). */
  payerOffset: number;
  /** Offsets of other keys that are safe to randomize (user accounts). */
  patchOffsets: number[];
  /** Offset of the static key standing for the pool (swaps only, else -1). */
  poolOffset: number;
  signatureCount: number;
}

function randomKey(prng: Prng): string {
  return base58.encode(prng.bytes(PUBKEY_BYTES));
}

function u8Data(prng: Prng, tag: number, length: number): Uint8Array {
  const data = prng.bytes(length);
  data[0] = tag;
  return data;
}

function voteTemplateInput(prng: Prng): { input: TransactionInput; pool: string | undefined; user: string[] } {
  const identity = keypairFromSeed(prng.bytes(32));
  const voteAccount = randomKey(prng);
  return {
    input: {
      payer: identity,
      recentBlockhash: randomKey(prng),
      instructions: [
        {
          programId: VOTE_PROGRAM,
          accounts: [
            { pubkey: voteAccount, isSigner: false, isWritable: true },
            { pubkey: identity.address, isSigner: true, isWritable: true },
          ],
          // TowerSync: lockouts, root, hash, timestamp, block id
          data: u8Data(prng, 14, prng.range(120, 200)),
        },
      ],
    },
    pool: undefined,
    user: [voteAccount],
  };
}

function swapTemplateInput(prng: Prng, targetSize: number): { input: TransactionInput; pool: string; user: string[] } {
  const payer = keypairFromSeed(prng.bytes(32));
  const pool = randomKey(prng);
  const userIn = randomKey(prng);
  const userOut = randomKey(prng);
  const mintIn = randomKey(prng);
  const mintOut = randomKey(prng);
  const dex = prng.pick(DEX_PROGRAMS);
  const versioned = prng.chance(0.85);
  // Static pool-side accounts (vaults, oracle, tick/bin arrays); in v0 most come from tables.
  const poolSide: string[] = [];
  const poolSideCount = prng.range(6, 14);
  for (let i = 0; i < poolSideCount; i++) poolSide.push(randomKey(prng));

  const instructions: InstructionInput[] = [
    { programId: COMPUTE_BUDGET_PROGRAM, accounts: [], data: u8Data(prng, 2, 5) },
    { programId: COMPUTE_BUDGET_PROGRAM, accounts: [], data: u8Data(prng, 3, 9) },
    {
      programId: ATA_PROGRAM,
      accounts: [
        { pubkey: payer.address, isSigner: true, isWritable: true },
        { pubkey: userOut, isSigner: false, isWritable: true },
        { pubkey: payer.address, isSigner: false, isWritable: false },
        { pubkey: mintOut, isSigner: false, isWritable: false },
        { pubkey: SYSTEM_PROGRAM, isSigner: false, isWritable: false },
        { pubkey: TOKEN_PROGRAM, isSigner: false, isWritable: false },
      ],
      data: new Uint8Array([1]),
    },
    {
      programId: dex,
      accounts: [
        { pubkey: pool, isSigner: false, isWritable: true },
        { pubkey: payer.address, isSigner: true, isWritable: false },
        { pubkey: userIn, isSigner: false, isWritable: true },
        { pubkey: userOut, isSigner: false, isWritable: true },
        { pubkey: mintIn, isSigner: false, isWritable: false },
        { pubkey: mintOut, isSigner: false, isWritable: false },
        { pubkey: TOKEN_PROGRAM, isSigner: false, isWritable: false },
        ...poolSide.map((k, i) => ({ pubkey: k, isSigner: false, isWritable: i % 3 !== 2 })),
      ],
      data: u8Data(prng, 0xf8, prng.range(17, 40)),
    },
  ];
  const input: TransactionInput = { payer, recentBlockhash: randomKey(prng), instructions };
  if (versioned) {
    const tables = prng.range(1, 3);
    const lookupTables: LookupTableInput[] = [];
    for (let t = 0; t < tables; t++) {
      const addresses = poolSide.filter((_, i) => i % tables === t);
      addresses.push(mintIn, mintOut, randomKey(prng), randomKey(prng));
      lookupTables.push({ address: randomKey(prng), addresses });
    }
    input.lookupTables = lookupTables;
  }
  // Pad with memo-like data up to the target size (Jupiter routes and bundles run large).
  const size = buildTransaction(input).length;
  if (targetSize > size + 40) {
    const pad: InstructionInput = { programId: randomKey(prng), accounts: [], data: new Uint8Array(0) };
    instructions.push(pad);
    const room = targetSize - buildTransaction(input).length;
    // The data length's compact-u16 grows to 2 bytes from 128 on.
    const dataLength = room > 128 ? room - 1 : room;
    if (dataLength > 0) pad.data = prng.bytes(dataLength);
    else instructions.pop();
  }
  return { input, pool, user: [userIn, userOut] };
}

function findKey(bytes: Uint8Array, keysOffset: number, keyCount: number, key: string): number {
  const k = base58.decodePubkey(key);
  for (let i = 0; i < keyCount; i++) {
    const at = keysOffset + i * PUBKEY_BYTES;
    let j = 0;
    while (j < PUBKEY_BYTES && bytes[at + j] === k[j]) j++;
    if (j === PUBKEY_BYTES) return at;
  }
  return -1;
}

function toTemplate(built: { input: TransactionInput; pool: string | undefined; user: string[] }): Template {
  const bytes = buildTransaction(built.input);
  const index = new EntryBatchIndex({ entries: 1, txs: 1, programs: 64 });
  const status = index.parse(encodeEntries([{ numHashes: 0n, hash: new Uint8Array(32), transactions: [bytes] }]));
  if (status !== ParseStatus.Ok) throw new Error(`mainnet-mix template does not parse (status ${status})`);
  // Offsets relative to the transaction's first byte.
  const base = index.txField(0, TX_START);
  const keysOffset = index.keyOffset(0, 0) - base;
  const keyCount = index.keyCount(0);
  const patchOffsets = built.user.map((k) => findKey(bytes, keysOffset, keyCount, k)).filter((o) => o >= 0);
  const poolOffset = built.pool === undefined ? -1 : findKey(bytes, keysOffset, keyCount, built.pool);
  return { bytes, payerOffset: keysOffset, patchOffsets, poolOffset, signatureCount: index.signatureCount(0) };
}

/** Size targets for swap templates: mostly mid-sized, a tail up to the 1232-byte limit. */
const SWAP_SIZES = [420, 520, 600, 680, 760, 850, 950, 1050, 1150, 1232];

export function generateMainnetMix(options: MainnetMixOptions): MainnetMix {
  const prng = new Prng(options.seed ?? 1);
  const poolKeys = (options.poolKeys ?? []).map((k) => (typeof k === 'string' ? base58.decodePubkey(k) : k));
  const poolFraction = poolKeys.length > 0 ? (options.poolFraction ?? 0.2) : 0;
  const voteFraction = options.voteFraction ?? 0.6;
  const txsPerEntry = options.txsPerEntry ?? 8;
  const ticksPerEntry = options.ticksPerEntry ?? 0.25;

  const votes: Template[] = [];
  for (let i = 0; i < 4; i++) votes.push(toTemplate(voteTemplateInput(prng)));
  const swaps: Template[] = [];
  for (const size of SWAP_SIZES) swaps.push(toTemplate(swapTemplateInput(prng, size)));

  const transactions: Uint8Array[] = [];
  const poolTxIndexes: number[] = [];
  const poolKeyIndexes: number[] = [];
  for (let i = 0; i < options.transactions; i++) {
    const touchesPool = prng.chance(poolFraction);
    const isVote = !touchesPool && prng.chance(voteFraction);
    const template = isVote ? prng.pick(votes) : prng.pick(swaps);
    const tx = template.bytes.slice();
    prng.fill(tx, 1, 1 + template.signatureCount * SIGNATURE_BYTES);
    prng.fill(tx, template.payerOffset, template.payerOffset + PUBKEY_BYTES);
    for (const o of template.patchOffsets) prng.fill(tx, o, o + PUBKEY_BYTES);
    if (template.poolOffset >= 0) {
      if (touchesPool) {
        const which = prng.int(poolKeys.length);
        tx.set(poolKeys[which]!, template.poolOffset);
        poolTxIndexes.push(i);
        poolKeyIndexes.push(which);
      } else {
        prng.fill(tx, template.poolOffset, template.poolOffset + PUBKEY_BYTES);
      }
    }
    transactions.push(tx);
  }

  const entries: EntryInput[] = [];
  let next = 0;
  while (next < transactions.length) {
    while (prng.chance(ticksPerEntry / (1 + ticksPerEntry))) {
      entries.push({ numHashes: BigInt(prng.range(1, 12_500)), hash: prng.bytes(32), transactions: [] });
    }
    const n = Math.min(transactions.length - next, prng.range(1, 2 * txsPerEntry - 1));
    entries.push({ numHashes: BigInt(prng.range(1, 12_500)), hash: prng.bytes(32), transactions: transactions.slice(next, next + n) });
    next += n;
  }
  return { bytes: encodeEntries(entries), entryCount: entries.length, txCount: transactions.length, poolTxIndexes, poolKeyIndexes };
}
