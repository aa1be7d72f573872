import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../src/store/store.js';

// A commit that returned must survive a power loss: WAL with synchronous=NORMAL does not promise that.
describe('SQLite store durability', () => {
  it('opens a file store in WAL mode with synchronous=FULL, on every connection it makes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'partner-sync-durability-'));
    const url = `sqlite:${join(dir, 'store.sqlite')}`;
    try {
      for (let open = 0; open < 2; open++) {
        const store = await openStore({ url });
        try {
          const [sync] = (await store.knex.raw('PRAGMA synchronous')) as { synchronous: number }[];
          const [journal] = (await store.knex.raw('PRAGMA journal_mode')) as { journal_mode: string }[];
          assert.equal(sync?.synchronous, 2, 'PRAGMA synchronous: 2 is FULL');
          assert.equal(journal?.journal_mode, 'wal');
        } finally {
          await store.close();
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
