/**
 * The checksum both ends of the ring tests compute over records (slot, receivedAt, payload), so a
 * lost, reordered, duplicated or corrupted record changes the result.
 */
export class RecordChecksum {
  count = 0;
  bytes = 0;
  hash = 0x811c9dc5;

  add(slotLo: number, slotHi: number, receivedAt: number, payload: Uint8Array): void {
    let h = this.hash;
    h = Math.imul(h ^ slotLo, 0x01000193);
    h = Math.imul(h ^ slotHi, 0x01000193);
    h = Math.imul(h ^ (receivedAt | 0), 0x01000193);
    h = Math.imul(h ^ payload.length, 0x01000193);
    for (let i = 0; i < payload.length; i++) h = Math.imul(h ^ payload[i]!, 0x01000193);
    this.hash = h >>> 0;
    this.count++;
    this.bytes += payload.length;
  }
}
