import { parseEntries } from '../../chain/index.js';
import { decodeEntryBatch } from '../../chain/index.js';
import { createDecoderRegistry } from '../../dex/index.js';
import { parseCommandLine } from '../../config/index.js';
import { ErrorCode, TpError } from '../../errors.js';
import { readAccountInput } from '../account-input.js';
import { type Command, toJson } from '../command.js';
import { ENCODINGS, decodeBytes, readInput } from '../read-input.js';

const HELP = `Usage:
  tidepool decode entries FILE|- [--slot N] [--encoding raw|base64|hex]
  tidepool decode account FILE|- [--owner PROGRAM_ID] [--address ADDRESS] [--encoding raw|base64|hex]

decode entries
  Parses a ShredStream entry payload (the bincode Vec<Entry> carried in Entry.entries) and prints
  one JSON line per transaction: slot, entryIndex, signature, version ("legacy" or 0), header,
  accountKeys, addressTableLookups, programIds, recentBlockhash. A malformed payload prints the
  reason and the byte offset and exits 1; nothing is printed for it.
  --slot N         slot to report (default 0)
  --encoding E     how FILE is written: raw bytes (default), base64 or hex

decode account
  Decodes a pool account (or a tick array, AMM config or bin array) and prints it as JSON.
  FILE may be a getAccountInfo response, its value, a 'solana account --output json' dump (the
  owner is read from it), or the account's bytes with --owner.
  --owner ID       owner program id (needed for bytes; overrides the JSON's owner)
  --address A      the account's address, reported in the output
  --encoding E     raw (default), base64 or hex, for bytes input

Program ids: dexa_amm 675kPX9MHTjS2zt1qfr1NYHuzeLXfQM9H24wFSUt1Mp8, dexa_clmm CAMMCzo5YL8w4VFF8KVHrK22GGUsp5VTaW7grrKgrWqK,
dexb_dlmm LBUZKhRxPF3XUpBCjp4YzTKgLccjZhTSDM9YuVaPwxo, dexc_whirlpool whirLbMiicVdio4qvUfM5KAg6Ct8VwpYzGff3uctyCc.
`;

const OPTIONS = {
  slot: { type: 'string', description: 'slot' },
  encoding: { type: 'string', description: 'input encoding' },
  owner: { type: 'string', description: 'owner program id' },
  address: { type: 'string', description: 'account address' },
} as const;

export const decodeCommand: Command = {
  name: 'decode',
  summary: 'decode entry payloads and pool accounts to JSON (inspection)',
  help: HELP,
  async run(argv, io) {
    const { options, positionals } = parseCommandLine(argv, {}, OPTIONS);
    const [what, file, ...extra] = positionals;
    if (file === undefined || extra.length > 0 || (what !== 'entries' && what !== 'account')) {
      throw new TpError(ErrorCode.Usage, `expected 'entries FILE|-' or 'account FILE|-'\n\n${HELP}`);
    }
    const encoding = (options.encoding as string | undefined) ?? 'raw';
    if (!(ENCODINGS as readonly string[]).includes(encoding)) {
      throw new TpError(ErrorCode.Usage, `--encoding must be one of ${ENCODINGS.join(', ')}`);
    }
    if (what === 'entries') {
      const slotText = (options.slot as string | undefined) ?? '0';
      if (!/^\d{1,20}$/.test(slotText) || BigInt(slotText) > 0xffff_ffff_ffff_ffffn) {
        throw new TpError(ErrorCode.Usage, `--slot must be an unsigned 64-bit integer, got ${JSON.stringify(slotText)}`);
      }
      const bytes = decodeBytes(await readInput(file, io), encoding, file);
      const views = decodeEntryBatch(bytes, BigInt(slotText), parseEntries);
      const lines = views.map((v) => toJson(v.toJSON()));
      io.stdout.write(lines.length === 0 ? '' : `${lines.join('\n')}\n`);
      return 0;
    }
    const account = await readAccountInput(file, encoding, io);
    const owner = (options.owner as string | undefined) ?? account.owner;
    if (owner === undefined) throw new TpError(ErrorCode.Usage, 'the owner program is unknown: pass --owner PROGRAM_ID');
    const address = (options.address as string | undefined) ?? account.address;
    const decoded = createDecoderRegistry().decodeAccount(owner, account.data, address);
    io.stdout.write(`${toJson({ owner, ...decoded }, 2)}\n`);
    return 0;
  },
};
