/**
 * BENCH_FAULT=<suite>:<fault>[,<suite>:<fault>...]: makes a suite misbehave in its process
 * (suite-child.ts), for the runner's own tests and to see how a bad suite is reported.
 *   hang   never finishes (the time limit ends it)
 *   fail   throws
 *   crash  exits with code 70 without a word
 *   leak   starts a process that would outlive it, then hangs
 */
export const FAULT_ENV = 'BENCH_FAULT';
export const FAULTS = ['hang', 'fail', 'crash', 'leak'] as const;
export type Fault = (typeof FAULTS)[number];

/** The fault BENCH_FAULT asks of `suite`, if any; throws on a fault it does not know. */
export function faultFor(suite: string, spec: string | undefined): Fault | undefined {
  for (const part of (spec ?? '').split(',')) {
    if (part.trim() === '') continue;
    const [name, fault] = part.trim().split(':');
    if (!(FAULTS as readonly string[]).includes(fault ?? '')) throw new Error(`${FAULT_ENV}: ${JSON.stringify(part)} is not <suite>:<${FAULTS.join('|')}>`);
    if (name === suite) return fault as Fault;
  }
  return undefined;
}
