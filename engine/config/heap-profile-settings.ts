/**
 * `debug.heapProfile` (HEAP_PROFILE): the sampling heap profiler kept on from start so that
 * `GET /debug/pprof/heap` (engine/obs heap-profile.ts) has a profile to give. Shared by the quote
 * service and every service the service host assembles (engine/app/service-host.ts).
 */
import { setting } from './loader.js';
import { bool } from './setting-types.js';

export const heapProfileSchema = {
  'debug.heapProfile': setting({ description: 'keep the sampling heap profiler on for GET /debug/pprof/heap', parse: bool(), default: true, env: 'HEAP_PROFILE', flag: 'heap-profile' }),
};
