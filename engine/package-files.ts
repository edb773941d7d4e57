/**
 * Files that ship beside the code in the package (proto/, schemas/, engine/console/static/), found
 * from this module in the sources (engine/) and in the build (dist/engine/) alike: the package root
 * is the nearest directory above that holds tidepool's package.json. Leaf module.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { ErrorCode, TpError } from './errors.js';

let cachedRoot: string | undefined;

/** The package's root directory. */
export function packageRoot(): string {
  if (cachedRoot !== undefined) return cachedRoot;
  const here = dirname(fileURLToPath(import.meta.url));
  for (let dir = here; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'tidepool') return (cachedRoot = dir);
    if (dirname(dir) === dir) break;
  }
  throw new TpError(ErrorCode.Internal, `cannot find tidepool's package.json above ${here}`);
}

/** Absolute path of a file or directory of the package, e.g. `packagePath('schemas', 'sql')`. */
export function packagePath(...segments: string[]): string {
  return join(packageRoot(), ...segments);
}
