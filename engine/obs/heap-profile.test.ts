import { gunzipSync } from 'node:zlib';

import { Profile } from 'pprof-format';
import { describe, expect, it } from 'vitest';

import {
  acquireHeapSampling,
  heapProfilePprofGzip,
  heapProfileToPprof,
  heapSamplingActive,
  releaseHeapSampling,
  sampleHeapProfile,
  type HeapProfileNode,
  type SamplingHeapProfile,
} from './heap-profile.js';

function node(id: number, functionName: string, url: string, line: number, selfSize: number, children: HeapProfileNode[] = []): HeapProfileNode {
  return { id, selfSize, children, callFrame: { functionName, scriptId: String(id), url, lineNumber: line, columnNumber: 4 } };
}

describe('heapProfileToPprof', () => {
  it('gives one sample per node with live bytes, its stack leaf first, objects and bytes', () => {
    const leaf = node(3, 'alloc', 'file:///a.js', 9, 2048);
    const anon = node(4, '', 'file:///b.js', 0, 512);
    const profile: SamplingHeapProfile = {
      head: node(1, '(root)', '', -1, 0, [node(2, 'main', 'file:///a.js', 1, 0, [leaf, anon])]),
      samples: [
        { size: 1024, nodeId: 3, ordinal: 1 },
        { size: 1024, nodeId: 3, ordinal: 2 },
        { size: 512, nodeId: 4, ordinal: 3 },
      ],
    };
    const p = Profile.decode(heapProfileToPprof(profile, 1_700_000_000_000).encode());
    const s = p.stringTable.strings;
    const fnName = new Map(p.function.map((f) => [Number(f.id), s[Number(f.name)]]));
    const locName = new Map(p.location.map((l) => [Number(l.id), `${fnName.get(Number(l.line[0]!.functionId))}:${Number(l.line[0]!.line)}`]));
    const samples = p.sample.map((x) => ({ stack: x.locationId.map((id) => locName.get(Number(id))), values: x.value.map(Number) }));
    expect(samples).toEqual(
      expect.arrayContaining([
        { stack: ['alloc:10', 'main:2'], values: [2, 2048] },
        { stack: ['(anonymous):1', 'main:2'], values: [1, 512] },
      ]),
    );
    expect(samples).toHaveLength(2);
    expect(Number(p.timeNanos)).toBe(1_700_000_000_000 * 1e6);
    expect(s[Number(p.defaultSampleType)]).toBe('space');
  });
});

describe('heap sampling session', () => {
  it('is off until acquired, shared by reference count, and off again after the last release', async () => {
    expect(heapSamplingActive()).toBe(false);
    await expect(sampleHeapProfile()).rejects.toThrow(/off/);
    await acquireHeapSampling();
    await acquireHeapSampling();
    // ~16 MB kept live: at the 512 KiB mean sampling interval that is ~30 expected samples, so an
    // empty profile (probability e^-30) means sampling is off, not bad luck.
    const keep = Array.from({ length: 200_000 }, (_, i) => ({ i, s: `${'x'.repeat(40)}${i}` }));
    await releaseHeapSampling();
    expect(heapSamplingActive()).toBe(true);
    const live = await sampleHeapProfile();
    expect(live.head.callFrame.functionName).toBe('(root)');
    const profile = Profile.decode(gunzipSync(await heapProfilePprofGzip()));
    expect(profile.sample.length).toBeGreaterThan(0);
    await releaseHeapSampling();
    expect(heapSamplingActive()).toBe(false);
    expect(keep).toHaveLength(200_000);
  });
});
