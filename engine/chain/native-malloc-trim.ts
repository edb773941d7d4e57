/**
 * The C heap's free pages back to the kernel, through the add-on (native/malloc_trim.cc: glibc's
 * malloc_trim(0)). Without the add-on (or off glibc) there is nothing to call: `trimCHeap` returns
 * false and the process keeps what glibc keeps, which only costs resident memory.
 */
import { nativeAddon } from './native-addon.js';

/** Whether the add-on's trim is there to call. */
export const cHeapTrimAvailable = nativeAddon !== null;

/** Trims the C heap; true when memory was given back. */
export function trimCHeap(): boolean {
  return nativeAddon === null ? false : nativeAddon.trimMalloc();
}
