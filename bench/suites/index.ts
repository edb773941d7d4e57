import type { Suite } from '../harness.js';
import { parseSuite } from './parse.js';

/** Every benchmark suite, in the order `npm run bench` runs them. */
export const SUITES: readonly Suite[] = [parseSuite];
