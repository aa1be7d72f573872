import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_MAX_DAY_SHRINK } from '../../jobs/day-guard.js';
import { loadDefinition } from '../../src/config/load-definitions.js';
import { packageRoot } from '../../src/paths.js';
import { definitionFolder, minimalDefinition, type DefinitionFolder } from './fixtures.js';

const ENV = { TEST_SECRET: 'test-secret-value-1' };
const activity = (incremental: string) => `  activity:
    path: /a
    incremental: ${incremental}`;

describe('connector definitions: max_day_shrink of a daily stream', () => {
  let folder: DefinitionFolder;
  beforeEach(() => (folder = definitionFolder()));
  afterEach(() => folder.remove());

  it('is a share from 0 to 1; absent, the guard applies the schema’s default', async () => {
    const given = await loadDefinition(folder.write('acme.yaml', minimalDefinition('acme', { streams: activity('{ max_day_shrink: 0.9 }') })), ENV);
    assert.deepEqual(given.errors, []);
    assert.equal(given.definition?.streams.activity?.incremental.mode === 'daily' && given.definition.streams.activity.incremental.max_day_shrink, 0.9);
    const schema = JSON.parse(readFileSync(join(packageRoot(), 'src', 'config', 'partner-definition.schema.json'), 'utf8')) as { $defs: Record<string, { default?: unknown }> };
    assert.equal(schema.$defs.maxDayShrink?.default, DEFAULT_MAX_DAY_SHRINK);
    assert.equal(DEFAULT_MAX_DAY_SHRINK, 0.5);
  });

  it('outside 0..1 is a definition error naming the path', async () => {
    const file = folder.write('acme.yaml', minimalDefinition('acme', { streams: activity('{ max_day_shrink: 2 }') }));
    const { definition, errors } = await loadDefinition(file, ENV);
    assert.equal(definition, undefined);
    assert.deepEqual(errors.map((e) => `${e.path}: ${e.message}`), ['streams.activity.incremental.max_day_shrink: must be <= 1, got 2']);
  });
});
