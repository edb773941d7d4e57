import { compactU16Size } from '../chain/index.js';
import {
  assembleTransaction,
  compileMessage,
  serializeMessage,
  signBytes,
  type InstructionInput,
  type Keypair,
  type LookupTableInput,
} from '../chain/index.js';
import { ErrorCode, TpError, invalidArgument } from '../errors.js';

/**
 * A compiled, serialized message with the places of its blockhash and instruction data, so that a
 * transaction of the same shape (same payer, accounts and data lengths) is made by patching those
 * bytes and signing, without compiling again. The flow signs hundreds of transactions a slot over
 * a few thousand shapes; compiling each costs as much as a tenth of its signature.
 * The bytes are those buildTransaction makes for the same input (transaction-builder.ts).
 */
export class MessageTemplate {
  private constructor(
    private readonly message: Uint8Array,
    private readonly blockhashOffset: number,
    private readonly dataOffsets: readonly number[],
    private readonly dataLengths: readonly number[],
    private readonly payer: Keypair,
  ) {}

  /**
   * Compiles a message paid and signed by `payer` alone: legacy, or v0 loading what it can through
   * `lookupTables` (in order of preference) when they are given.
   */
  static compile(payer: Keypair, instructions: readonly InstructionInput[], blockhash: Uint8Array, lookupTables?: readonly LookupTableInput[]): MessageTemplate {
    const compiled = compileMessage({ payer, instructions, recentBlockhash: blockhash, ...(lookupTables !== undefined ? { lookupTables } : {}) });
    if (compiled.header.numRequiredSignatures !== 1) {
      throw new TpError(ErrorCode.TransactionInvalid, `a message template has one signer, the payer; this message has ${compiled.header.numRequiredSignatures}`, {
        context: { reason: 'signer-count', signers: compiled.header.numRequiredSignatures },
      });
    }
    // v0: the version byte (0x80) comes first; the address table lookups come after the data.
    let p = (compiled.version === 0 ? 1 : 0) + 3 + compactU16Size(compiled.staticAccountKeys.length) + 32 * compiled.staticAccountKeys.length;
    const blockhashOffset = p;
    p += 32 + compactU16Size(compiled.instructions.length);
    const dataOffsets: number[] = [];
    const dataLengths: number[] = [];
    for (const ix of compiled.instructions) {
      p += 1 + compactU16Size(ix.accounts.length) + ix.accounts.length + compactU16Size(ix.data.length);
      dataOffsets.push(p);
      dataLengths.push(ix.data.length);
      p += ix.data.length;
    }
    return new MessageTemplate(serializeMessage(compiled), blockhashOffset, dataOffsets, dataLengths, payer);
  }

  /** The signed transaction with `blockhash` and each instruction's `data` (lengths as compiled). */
  sign(blockhash: Uint8Array, data: readonly (Uint8Array | undefined)[]): Uint8Array {
    const message = this.message.slice();
    message.set(blockhash, this.blockhashOffset);
    for (let i = 0; i < this.dataOffsets.length; i++) {
      const d = data[i];
      if (d === undefined) continue;
      if (d.length !== this.dataLengths[i]) throw invalidArgument(`data[${i}]`, d.length, `instruction ${i} data is ${d.length} bytes, the template's ${this.dataLengths[i]}`);
      message.set(d, this.dataOffsets[i]!);
    }
    return assembleTransaction(message, [signBytes(message, this.payer)]);
  }
}

/** Templates by shape key; dropped wholesale when full. */
export class TemplateCache {
  private readonly templates = new Map<string, MessageTemplate>();

  constructor(private readonly limit = 8192) {}

  get(key: string, make: () => MessageTemplate): MessageTemplate {
    let template = this.templates.get(key);
    if (template === undefined) {
      template = make();
      if (this.templates.size >= this.limit) this.templates.clear();
      this.templates.set(key, template);
    }
    return template;
  }
}
