/**
 * The partner-style replica samples in samples/partner-replica/ are what the generator prints
 * (their header comments aside), so the rehearsal of docs/onboarding.md loads the data the tests reconcile.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../src/paths.js';
import { createSandboxData } from '../../src/sandbox/data.js';
import { partnerReplicaSql } from '../../src/sandbox/partner-replica.js';
import type { Variant } from '../../src/types.js';

describe('samples/partner-replica', () => {
  for (const [file, variant] of [['casino-replica.mysql.sql', 'igaming'], ['prop-replica.mysql.sql', 'prop-trading']] as [string, Variant][]) {
    it(`${file} is the generator's ${variant} replica (50 customers, 2026-10-01..2026-10-30)`, () => {
      const text = readFileSync(join(packageRoot(), 'samples', 'partner-replica', file), 'utf8');
      const body = text.split('\n').filter((l) => !l.startsWith('--')).join('\n').trim();
      const data = createSandboxData({ customers: 50, from: '2026-10-01', to: '2026-10-30' });
      assert.equal(body, partnerReplicaSql('mysql', data, variant).map((s) => `${s};\n`).join('\n').trim());
    });
  }
});
