import { spawnSync } from 'node:child_process';

import { describe, expect, it } from 'vitest';

import { zstdRawFrame } from './zstd-raw-frame.js';

const zstdCli = spawnSync('zstd', ['--version']).status === 0;

function decodeWithCli(frame: Uint8Array): Buffer {
  const out = spawnSync('zstd', ['-d', '-c', '-q'], { input: frame, maxBuffer: 64 * 1024 * 1024 });
  if (out.status !== 0) throw new Error(`zstd -d failed: ${String(out.stderr)}`);
  return out.stdout;
}

describe('zstdRawFrame', () => {
  it('starts with the magic number and a single-segment header', () => {
    const frame = zstdRawFrame(Uint8Array.from([1, 2, 3]));
    expect([...frame]).toEqual([0x28, 0xb5, 0x2f, 0xfd, 0x20, 3, 0x19, 0, 0, 1, 2, 3]);
  });

  it.skipIf(!zstdCli)('decodes to the exact bytes with the zstd tool, at every content-size width', () => {
    for (const size of [0, 1, 255, 256, 65_791, 65_792, 131_072, 300_001]) {
      const content = Uint8Array.from({ length: size }, (_, i) => (i * 31 + 7) & 0xff);
      expect(decodeWithCli(zstdRawFrame(content)).equals(Buffer.from(content)), `size ${size}`).toBe(true);
    }
  });
});
