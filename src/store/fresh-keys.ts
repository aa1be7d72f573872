/**
 * Which activity keys a day-replacing transaction has written, kept as 32-bit hashes in an
 * open-addressing table (4 bytes a key: a day of 333,000 rows costs 2-4 MB, not the 25 MB of a
 * Set of key strings). It answers one question soundly: "has none of these keys been written in
 * this transaction?" A hash seen before may be another key's (a collision): the answer is then
 * "maybe", and the caller takes the path that copes with an existing key. "No" is always true.
 */
export class FreshKeys {
  private slots = new Uint32Array(1 << 12);
  private size = 0;

  private static hash(key: string): number {
    // FNV-1a over UTF-16 units; 0 marks an empty slot, so it is moved to 1.
    let h = 0x811c9dc5;
    for (let i = 0; i < key.length; i++) {
      h ^= key.charCodeAt(i);
      h = Math.imul(h, 0x01000193);
    }
    return h >>> 0 || 1;
  }

  private find(h: number): number {
    const mask = this.slots.length - 1;
    let i = h & mask;
    while (this.slots[i] !== 0 && this.slots[i] !== h) i = (i + 1) & mask;
    return i;
  }

  /** True when no key of `keys` (nor a key of the same hash) was added before; adds them all either way. */
  addAllNew(keys: Iterable<string>): boolean {
    let fresh = true;
    for (const key of keys) {
      const h = FreshKeys.hash(key);
      const i = this.find(h);
      if (this.slots[i] === h) {
        fresh = false;
        continue;
      }
      this.slots[i] = h;
      if (++this.size * 2 > this.slots.length) this.grow();
    }
    return fresh;
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Uint32Array(old.length * 2);
    for (const h of old) if (h !== 0) this.slots[this.find(h)] = h;
  }
}
