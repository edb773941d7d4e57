/**
 * A valid Zstandard frame that stores its content uncompressed (RFC 8878 raw blocks), for the
 * `base64+zstd` account encoding. Node 20 has no zstd compressor; any zstd decoder reads these
 * frames, so clients asking for `base64+zstd` get the exact bytes back, only not smaller.
 *
 *   magic FD2FB528 (LE) | frame header descriptor | frame content size | block... (3-byte headers)
 */

const MAGIC = [0x28, 0xb5, 0x2f, 0xfd] as const;
/** Frame_Header_Descriptor: Single_Segment_Flag, no checksum, no dictionary. */
const SINGLE_SEGMENT = 0x20;
/** Raw blocks are capped at Block_Maximum_Size = 128 KiB. */
const MAX_BLOCK = 128 * 1024;
const BLOCK_HEADER_BYTES = 3;
const LAST_BLOCK = 1;

export function zstdRawFrame(content: Uint8Array): Uint8Array {
  const size = content.length;
  // Frame_Content_Size field: 1 byte below 256, 2 bytes (stored minus 256) below 65792, else 4.
  const fcsFlag = size < 256 ? 0 : size < 65_792 ? 1 : 2;
  const fcsBytes = fcsFlag === 0 ? 1 : fcsFlag === 1 ? 2 : 4;
  const blocks = Math.max(1, Math.ceil(size / MAX_BLOCK));
  const out = new Uint8Array(MAGIC.length + 1 + fcsBytes + blocks * BLOCK_HEADER_BYTES + size);
  out.set(MAGIC, 0);
  let at = MAGIC.length;
  out[at++] = (fcsFlag << 6) | SINGLE_SEGMENT;
  const fcs = fcsFlag === 1 ? size - 256 : size;
  for (let i = 0; i < fcsBytes; i++) out[at++] = (fcs >>> (8 * i)) & 0xff;
  let offset = 0;
  for (let b = 0; b < blocks; b++) {
    const length = Math.min(MAX_BLOCK, size - offset);
    // Block_Header: Last_Block (bit 0), Block_Type 0 = Raw (bits 1-2), Block_Size (bits 3-23).
    const header = (length << 3) | (b === blocks - 1 ? LAST_BLOCK : 0);
    out[at++] = header & 0xff;
    out[at++] = (header >>> 8) & 0xff;
    out[at++] = (header >>> 16) & 0xff;
    out.set(content.subarray(offset, offset + length), at);
    at += length;
    offset += length;
  }
  return out;
}
