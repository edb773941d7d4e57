/**
 * The operational answers of a service's ports, transport-free so that the quote service's uWS port
 * and every node:http metrics port serve the same bytes: `/metrics` (the service's registry, its
 * scrape-time gauges refreshed first) and `/debug/pprof/heap` (engine/obs/heap-profile.ts).
 */
import type { Registry } from 'prom-client';

import {
  HEAP_PROFILE_FILENAMES,
  heapProfilePprofGzip,
  heapSamplingActive,
  sampleHeapProfile,
} from '../obs/index.js';
import { errorBody } from './error-body.js';
import { ErrorCode } from '../errors.js';

export interface OpsResponse {
  status: 200 | 400 | 404 | 500;
  headers: [string, string][];
  body: string | Buffer;
}

/** Prometheus text of `registry`, after `refresh()` has set the gauges read on scrape. */
export async function metricsResponse(registry: Registry, refresh: () => void): Promise<OpsResponse> {
  refresh();
  const text = await registry.metrics();
  return { status: 200, headers: [['Content-Type', registry.contentType]], body: text };
}

/**
 * The live sampled heap: `format` `pprof` (default; gzipped protobuf, `heap.pb.gz`) or `devtools`
 * (V8 SamplingHeapProfile JSON, `heap.heapprofile`). 404 when heap profiling is off.
 */
export async function heapProfileResponse(format: string): Promise<OpsResponse> {
  const json: [string, string] = ['Content-Type', 'application/json'];
  if (format !== '' && format !== 'pprof' && format !== 'devtools') {
    return { status: 400, headers: [json], body: errorBody(ErrorCode.BadParameter, 'parameter format must be pprof or devtools') };
  }
  if (!heapSamplingActive()) {
    return { status: 404, headers: [json], body: errorBody(ErrorCode.NotFound, 'heap profiling is off (HEAP_PROFILE=false)') };
  }
  if (format === 'devtools') {
    const profile = await sampleHeapProfile();
    return {
      status: 200,
      headers: [json, ['Content-Disposition', `attachment; filename="${HEAP_PROFILE_FILENAMES.devtools}"`]],
      body: JSON.stringify(profile),
    };
  }
  return {
    status: 200,
    headers: [
      ['Content-Type', 'application/octet-stream'],
      ['Content-Disposition', `attachment; filename="${HEAP_PROFILE_FILENAMES.pprof}"`],
    ],
    body: await heapProfilePprofGzip(),
  };
}

/** A failure while building an ops answer. */
export function opsFailure(): OpsResponse {
  return { status: 500, headers: [['Content-Type', 'application/json']], body: errorBody(ErrorCode.Internal, 'internal error') };
}
