// The root package's `install` script: builds the optional C++ add-on (binding.gyp ->
// build/Release/tidepool_native.node). It never fails the install: without the add-on,
// engine/chain/native-parser.ts falls back to the TypeScript parser.
//
//   TIDEPOOL_NATIVE=0 node scripts/build-native.mjs   skip the build
//   node scripts/build-native.mjs --verbose          show the compiler output even on success
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const output = join(root, 'build', 'Release', 'tidepool_native.node');
const verbose = process.argv.includes('--verbose');

function warn(reason) {
  console.warn(
    `tidepool: native parser not built (${reason}); the TypeScript parser will be used. ` +
      'Run `node scripts/build-native.mjs --verbose` to see why.',
  );
}

// node-gyp from our node_modules, else the one npm bundles (npm names it in npm_config_node_gyp
// when it runs install scripts), else whatever npx finds or fetches.
function nodeGypCommand() {
  const local = join(root, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  if (existsSync(local)) return { cmd: process.execPath, args: [local] };
  const bundled = process.env.npm_config_node_gyp;
  if (bundled && existsSync(bundled)) return { cmd: process.execPath, args: [bundled] };
  return { cmd: process.platform === 'win32' ? 'npx.cmd' : 'npx', args: ['--yes', 'node-gyp'] };
}

// Headers of the running node, so node-gyp does not download them: npm passes its own `nodedir`
// setting as npm_config_nodedir; otherwise use the include/node tree installed beside this node.
function nodedirArgs() {
  if (process.env.npm_config_nodedir) return [];
  const prefix = resolve(dirname(process.execPath), '..');
  if (existsSync(join(prefix, 'include', 'node', 'node_api.h'))) return [`--nodedir=${prefix}`];
  return [];
}

function main() {
  if (process.env.TIDEPOOL_NATIVE === '0') {
    console.log('tidepool: TIDEPOOL_NATIVE=0, native parser build skipped');
    return;
  }
  try {
    createRequire(import.meta.url).resolve('node-addon-api');
  } catch {
    warn('node-addon-api is not installed');
    return;
  }
  const { cmd, args } = nodeGypCommand();
  const result = spawnSync(cmd, [...args, 'rebuild', ...nodedirArgs()], {
    cwd: root,
    stdio: verbose ? 'inherit' : 'pipe',
    encoding: 'utf8',
    shell: process.platform === 'win32', // .cmd files need a shell there
  });
  if (result.error) {
    warn(`could not run node-gyp: ${result.error.message}`);
    return;
  }
  if (result.status !== 0 || !existsSync(output)) {
    // One line of why (the first compiler or gyp error), not the whole log.
    const log = `${result.stderr ?? ''}\n${result.stdout ?? ''}`.split('\n');
    const first = log.find((l) => /error[:!]|Error:/.test(l) && !/^gyp ERR! (stack|System|command|cwd|node|not ok)/.test(l));
    warn(`node-gyp exited with ${result.status ?? result.signal}${first === undefined ? '' : `: ${first.trim()}`}`);
    return;
  }
  console.log(`tidepool: native parser built: ${output}`);
}

try {
  main();
} catch (err) {
  warn(err instanceof Error ? err.message : String(err));
}
// An install script that throws or exits non-zero would fail `npm install`; this one never does.
process.exitCode = 0;
