/**
 * Heap profiles for `GET /debug/pprof/heap`, from V8's sampling heap profiler (node:inspector
 * `HeapProfiler.startSampling` / `getSamplingProfile`), as Go's runtime does it: sampling stays on
 * from service start (one sample per 512 KiB allocated on average, Go's MemProfileRate), and a
 * profile is the allocations sampled since then that are still live.
 *
 * Two formats of the same profile:
 * - pprof: a gzipped `perftools.profiles.Profile` protobuf (encoded with `pprof-format`), sample
 *   types `objects/count` (sampled allocations still live, unscaled) and `space/bytes` (V8's
 *   estimate of the live bytes they stand for); one location per JavaScript frame. Opens with
 *   `go tool pprof` / `pprof`.
 * - devtools: V8's own `SamplingHeapProfile` JSON (`{head, samples}`), which Chrome DevTools'
 *   Memory panel loads as a `.heapprofile` file.
 *
 * One sampling session per process, shared by reference count: several services in one process
 * (tests, `tidepool engine`) see the same profile.
 */
import { Session } from 'node:inspector/promises';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';

import { Function as PprofFunction, Line, Location, Profile, Sample, StringTable, ValueType } from 'pprof-format';
import { ErrorCode, TpError } from '../errors.js';

const gzipAsync = promisify(gzip);

/** Go's runtime.MemProfileRate: one sample per 512 KiB allocated, on average. */
export const DEFAULT_HEAP_SAMPLING_INTERVAL = 512 * 1024;

export interface HeapCallFrame {
  functionName: string;
  scriptId: string;
  url: string;
  /** 0-based. */
  lineNumber: number;
  /** 0-based. */
  columnNumber: number;
}

export interface HeapProfileNode {
  callFrame: HeapCallFrame;
  /** Bytes of the sampled allocations at this node still live (V8's estimate), children excluded. */
  selfSize: number;
  id: number;
  children: HeapProfileNode[];
}

/** V8's SamplingHeapProfile: what Chrome DevTools opens as a `.heapprofile`. */
export interface SamplingHeapProfile {
  head: HeapProfileNode;
  samples: { size: number; nodeId: number; ordinal: number }[];
}

let session: Session | undefined;
let users = 0;
let interval = DEFAULT_HEAP_SAMPLING_INTERVAL;
let starting: Promise<void> | undefined;

/**
 * Starts the shared sampling session (first caller) or joins it. Every call must be matched by
 * `releaseHeapSampling`.
 */
export async function acquireHeapSampling(samplingInterval = DEFAULT_HEAP_SAMPLING_INTERVAL): Promise<void> {
  users++;
  if (session === undefined) {
    const s = new Session();
    s.connect();
    session = s;
    interval = samplingInterval;
    starting = (async () => {
      await s.post('HeapProfiler.enable');
      await s.post('HeapProfiler.startSampling', { samplingInterval });
    })();
  }
  await starting;
}

/** Leaves the shared session; the last one out stops sampling. */
export async function releaseHeapSampling(): Promise<void> {
  if (users === 0) return;
  users--;
  if (users > 0 || session === undefined) return;
  const s = session;
  session = undefined;
  starting = undefined;
  try {
    await s.post('HeapProfiler.stopSampling');
    await s.post('HeapProfiler.disable');
  } finally {
    s.disconnect();
  }
}

/** True while some service holds the sampling session. */
export function heapSamplingActive(): boolean {
  return session !== undefined;
}

/**
 * The sampled live allocations now. Throws when sampling is off (nobody acquired it).
 */
export async function sampleHeapProfile(): Promise<SamplingHeapProfile> {
  const s = session;
  if (s === undefined) throw new TpError(ErrorCode.Unavailable, 'heap sampling is off');
  await starting;
  const { profile } = await s.post('HeapProfiler.getSamplingProfile');
  return profile as SamplingHeapProfile;
}

/**
 * Converts a V8 sampling heap profile to pprof: one sample per node with live allocations, its
 * stack from the node up to the root (leaf first), values [objects, bytes].
 */
export function heapProfileToPprof(profile: SamplingHeapProfile, timeMs = Date.now()): Profile {
  const strings = new StringTable();
  const functions: PprofFunction[] = [];
  const locations: Location[] = [];
  const samples: Sample[] = [];
  const functionIds = new Map<string, number>();
  const locationIds = new Map<string, number>();
  const countByNode = new Map<number, number>();
  for (const s of profile.samples) countByNode.set(s.nodeId, (countByNode.get(s.nodeId) ?? 0) + 1);

  const locationOf = (frame: HeapCallFrame): number => {
    const name = frame.functionName === '' ? '(anonymous)' : frame.functionName;
    const fnKey = `${name}\0${frame.url}\0${frame.scriptId}`;
    let fnId = functionIds.get(fnKey);
    if (fnId === undefined) {
      fnId = functions.length + 1;
      functionIds.set(fnKey, fnId);
      const nameId = strings.dedup(name);
      functions.push(new PprofFunction({ id: fnId, name: nameId, systemName: nameId, filename: strings.dedup(frame.url) }));
    }
    const line = frame.lineNumber + 1;
    const locKey = `${fnId}:${line}:${frame.columnNumber}`;
    let locId = locationIds.get(locKey);
    if (locId === undefined) {
      locId = locations.length + 1;
      locationIds.set(locKey, locId);
      locations.push(new Location({ id: locId, line: [new Line({ functionId: fnId, line, column: frame.columnNumber + 1 })] }));
    }
    return locId;
  };

  // Iterative walk: deep stacks must not overflow ours.
  const stack: { node: HeapProfileNode; path: number[] }[] = [{ node: profile.head, path: [] }];
  while (stack.length > 0) {
    const { node, path } = stack.pop()!;
    // The root is V8's synthetic "(root)": not a frame.
    const here = node === profile.head ? path : [locationOf(node.callFrame), ...path];
    if (node.selfSize > 0) {
      samples.push(new Sample({ locationId: here, value: [countByNode.get(node.id) ?? 0, node.selfSize] }));
    }
    for (const child of node.children) stack.push({ node: child, path: here });
  }

  return new Profile({
    sampleType: [
      new ValueType({ type: strings.dedup('objects'), unit: strings.dedup('count') }),
      new ValueType({ type: strings.dedup('space'), unit: strings.dedup('bytes') }),
    ],
    sample: samples,
    location: locations,
    function: functions,
    stringTable: strings,
    timeNanos: BigInt(Math.round(timeMs)) * 1_000_000n,
    periodType: new ValueType({ type: strings.dedup('space'), unit: strings.dedup('bytes') }),
    period: interval,
    defaultSampleType: strings.dedup('space'),
  });
}

/** The gzipped pprof protobuf of the live sampled heap. */
export async function heapProfilePprofGzip(): Promise<Buffer> {
  const profile = heapProfileToPprof(await sampleHeapProfile());
  return gzipAsync(profile.encode());
}

/** Content-Disposition filenames of the two formats. */
export const HEAP_PROFILE_FILENAMES = { pprof: 'heap.pb.gz', devtools: 'heap.heapprofile' } as const;
