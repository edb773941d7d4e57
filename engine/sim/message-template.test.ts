import { describe, expect, it } from 'vitest';

import { buildTransaction, keypairFromSeed, type InstructionInput } from '../chain/transaction-builder.js';
import { ErrorCode } from '../errors.js';
import { computeUnitPrice, memoInstruction, systemTransfer } from './flow.js';
import { MessageTemplate } from './message-template.js';
import { SimRandom } from './prng.js';

describe('MessageTemplate', () => {
  it('signs the bytes buildTransaction makes for the same input', () => {
    const rng = new SimRandom(4);
    const payer = keypairFromSeed(rng.bytes(32));
    const to = keypairFromSeed(rng.bytes(32)).address;
    const shape = (lamports: bigint, price: bigint): InstructionInput[] => [
      computeUnitPrice(price),
      systemTransfer(payer.address, to, lamports),
      memoInstruction(payer.address, 'hi there'),
    ];
    const template = MessageTemplate.compile(payer, shape(1n, 1n), rng.bytes(32));
    for (let i = 0; i < 5; i++) {
      const blockhash = rng.bytes(32);
      const instructions = shape(BigInt(rng.u32()), BigInt(rng.u32()));
      const expected = buildTransaction({ payer, instructions, recentBlockhash: blockhash });
      expect(Buffer.from(template.sign(blockhash, instructions.map((ix) => ix.data))).equals(Buffer.from(expected))).toBe(true);
    }
  });

  it('signs the v0 bytes buildTransaction makes with the same lookup tables', () => {
    const rng = new SimRandom(6);
    const payer = keypairFromSeed(rng.bytes(32));
    const [to, other, readonly] = [0, 1, 2].map(() => keypairFromSeed(rng.bytes(32)).address);
    const tables = [
      { address: keypairFromSeed(rng.bytes(32)).address, addresses: [other!, to!] },
      { address: keypairFromSeed(rng.bytes(32)).address, addresses: [readonly!] },
    ];
    const shape = (lamports: bigint, price: bigint): InstructionInput[] => [
      computeUnitPrice(price),
      systemTransfer(payer.address, to!, lamports),
      {
        programId: memoInstruction(payer.address, '').programId,
        accounts: [
          { pubkey: payer.address, isSigner: true, isWritable: false },
          { pubkey: readonly!, isSigner: false, isWritable: false },
        ],
        data: new TextEncoder().encode('through a table'),
      },
    ];
    const template = MessageTemplate.compile(payer, shape(1n, 1n), rng.bytes(32), tables);
    for (let i = 0; i < 3; i++) {
      const blockhash = rng.bytes(32);
      const instructions = shape(BigInt(rng.u32()), BigInt(rng.u32()));
      const expected = buildTransaction({ payer, instructions, recentBlockhash: blockhash, lookupTables: tables });
      expect(expected[1 + 64]).toBe(0x80);
      expect(Buffer.from(template.sign(blockhash, instructions.map((ix) => ix.data))).equals(Buffer.from(expected))).toBe(true);
    }
  });

  it('refuses instruction data of another length', () => {
    const rng = new SimRandom(5);
    const payer = keypairFromSeed(rng.bytes(32));
    const template = MessageTemplate.compile(payer, [memoInstruction(payer.address, 'abc')], rng.bytes(32));
    expect(() => template.sign(rng.bytes(32), [new TextEncoder().encode('abcd')])).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: expect.objectContaining({ argument: 'data[0]' }) }));
  });
});
