import assert from 'node:assert/strict';
import { chmodSync } from 'node:fs';
import type { RestSource } from '../../src/config/definition.js';
import { definitionSchema } from '../../src/config/definition-schema.js';
import { formatDefinitionError, loadDefinition } from '../../src/config/load-definitions.js';
import { interpolate, resolveReferences, secretFieldNames, secretLocations } from '../../src/config/secrets.js';
import type { SchemaNode } from '../../src/config/secrets.js';
import { definitionFolder, minimalDefinition } from './fixtures.js';
import type { DefinitionFolder } from './fixtures.js';

const SECRET = 's3cr3t-Value/with+chars';

describe('secrets: ${ENV_VAR} references', () => {
  it('replaces whole and embedded references; $${ is a literal ${', () => {
    const env = { HOST: 'api.partner.example', A: 'x', B: 'y' };
    assert.deepEqual(interpolate('${HOST}', env), { value: 'api.partner.example', variables: ['HOST'], substituted: ['api.partner.example'], problems: [] });
    assert.equal(interpolate('https://${HOST}/x', env).value, 'https://api.partner.example/x');
    assert.equal(interpolate('${A}-${B}', env).value, 'x-y');
    assert.equal(interpolate('cost $${A} and $5', env).value, 'cost ${A} and $5');
    assert.equal(interpolate('no references', env).value, 'no references');
  });

  it('names a missing variable; a malformed or unterminated reference is an error', () => {
    assert.deepEqual(interpolate('${NOPE}', {}).problems, ['environment variable NOPE is not set']);
    assert.equal(interpolate('${NOPE}', {}).value, undefined);
    assert.deepEqual(interpolate('${my-var}', {}).problems, ['malformed reference ${my-var}: a variable name is letters, digits and _, not starting with a digit']);
    assert.deepEqual(interpolate('${OPEN', {}).problems, ['unterminated reference "${OPEN": write ${NAME}, or $${ for a literal ${']);
  });
});

describe('secrets: which fields are secret comes from the schema', () => {
  it('the definition schema marks client_secret, token, key and url (not client_id)', () => {
    assert.deepEqual(secretFieldNames(definitionSchema().schema), ['client_secret', 'key', 'token', 'url']);
  });

  it('follows the marks of any schema, through $ref, additionalProperties and the matching oneOf branch', () => {
    const schema: SchemaNode = {
      $defs: {
        a: { properties: { kind: { const: 'a' }, password: { 'x-secret': true } } },
        b: { properties: { kind: { const: 'b' }, pin: { 'x-secret': true } } },
      },
      properties: {
        dbs: { additionalProperties: { oneOf: [{ $ref: '#/$defs/a' }, { $ref: '#/$defs/b' }] } },
        plain: { properties: { password: {} } },
      },
    };
    const data = { dbs: { one: { kind: 'a', password: 'x' }, two: { kind: 'b', pin_file: '/p' }, three: { kind: 'a' } }, plain: { password: 'not secret here' } };
    assert.deepEqual(secretLocations(schema, data), [
      { path: ['dbs', 'one'], key: 'password' },
      { path: ['dbs', 'two'], key: 'pin' },
    ]);
  });

  it('resolves every string and only collects the secret ones', () => {
    const { schema } = definitionSchema();
    const data = {
      source: { base_url: 'https://${HOST}', auth: { type: 'oauth2_client_credentials', client_id: '${CLIENT_ID}', client_secret: '${SECRET}' } },
    };
    const result = resolveReferences(data, { schema, env: { HOST: 'h.example', CLIENT_ID: 'id-1', SECRET }, baseDir: '.' });
    assert.deepEqual(result.problems, []);
    assert.deepEqual(result.value, {
      source: { base_url: 'https://h.example', auth: { type: 'oauth2_client_credentials', client_id: 'id-1', client_secret: SECRET } },
    });
    assert.deepEqual(result.secrets, [SECRET]);
  });
});

describe('secrets: in definition files', () => {
  let folder: DefinitionFolder;
  beforeEach(() => (folder = definitionFolder()));
  afterEach(() => folder.remove());

  const oauth = (secretLine: string): string => `    type: oauth2_client_credentials\n    client_id: client-1\n${secretLine}`;

  it('from an environment variable', async () => {
    const file = folder.write('acme.yaml', minimalDefinition('acme', { auth: oauth('    client_secret: ${PARTNER_SECRET}') }));
    const { definition, errors } = await loadDefinition(file, { PARTNER_SECRET: SECRET });
    assert.deepEqual(errors, []);
    const auth = (definition?.source as RestSource | undefined)?.auth;
    assert.equal(auth?.type === 'oauth2_client_credentials' && auth.client_secret, SECRET);
    assert.deepEqual(definition?.secrets, [SECRET]);
  });

  it('embedded in a longer value: the whole value and the variable are both secrets', async () => {
    const file = folder.write('acme.yaml', minimalDefinition('acme', { auth: '    type: bearer\n    token: v1.${TOKEN_PART}' }));
    const { definition } = await loadDefinition(file, { TOKEN_PART: SECRET });
    assert.deepEqual((definition?.source as RestSource | undefined)?.auth, { type: 'bearer', token: `v1.${SECRET}` });
    assert.deepEqual(definition?.secrets, [`v1.${SECRET}`, SECRET]);
  });

  it('from a <field>_file, relative to the definition folder, trimmed', async () => {
    folder.write('secret.txt', `  ${SECRET}\n`);
    const file = folder.write('acme.yaml', minimalDefinition('acme', { auth: oauth('    client_secret_file: secret.txt') }));
    const { definition, errors } = await loadDefinition(file, {});
    assert.deepEqual(errors, []);
    assert.deepEqual((definition?.source as RestSource | undefined)?.auth, { type: 'oauth2_client_credentials', token_url: '/oauth/token', client_id: 'client-1', client_secret: SECRET });
    assert.deepEqual(definition?.secrets, [SECRET]);
  });

  it('a _file path may use a variable; an absolute path is read as is', async () => {
    const secretFile = folder.write('key.txt', SECRET);
    const file = folder.write('acme.yaml', minimalDefinition('acme', { auth: '    type: api_key\n    header: X-Partner-Key\n    key_file: ${SECRETS_DIR}/key.txt' }));
    const { definition, errors } = await loadDefinition(file, { SECRETS_DIR: folder.dir });
    assert.deepEqual(errors, []);
    assert.deepEqual((definition?.source as RestSource | undefined)?.auth, { type: 'api_key', header: 'X-Partner-Key', key: SECRET });
    assert.ok(secretFile.startsWith(folder.dir));
  });

  it('a literal secret is refused, and its value is not repeated', async () => {
    const file = folder.write('acme.yaml', minimalDefinition('acme', { auth: oauth(`    client_secret: ${SECRET}`) }));
    const { definition, errors } = await loadDefinition(file, {});
    assert.equal(definition, undefined);
    assert.deepEqual(errors.map(formatDefinitionError), [`${file}: source.auth.client_secret (line 9): secret fields take \${ENV_VAR} or client_secret_file, never a literal`]);
    assert.ok(!JSON.stringify(errors).includes(SECRET));
  });

  it('with the auth type left out, a literal in any field that could be secret is still refused', async () => {
    const file = folder.write('acme.yaml', minimalDefinition('acme', { auth: `    client_id: x\n    client_secret: ${SECRET}` }));
    const { errors } = await loadDefinition(file, {});
    assert.deepEqual(
      errors.map((e) => [e.path, e.message]),
      [
        ['source.auth.type', 'is required but missing; one of oauth2_client_credentials, bearer, api_key'],
        ['source.auth.client_secret', 'secret fields take ${ENV_VAR} or client_secret_file, never a literal'],
      ],
    );
  });

  it('a missing variable is named; no value of the environment is printed', async () => {
    const file = folder.write('acme.yaml', minimalDefinition('acme', { auth: oauth('    client_secret: ${PARTNER_SECRET}') }));
    const env = { PARTNER_SECRET_OLD: SECRET, OTHER: SECRET };
    const { errors } = await loadDefinition(file, env);
    assert.deepEqual(
      errors.map((e) => [e.path, e.line, e.message]),
      [['source.auth.client_secret', 9, 'environment variable PARTNER_SECRET is not set']],
    );
    assert.ok(!JSON.stringify(errors).includes(SECRET));
  });

  it('an empty variable is an error', async () => {
    const file = folder.write('acme.yaml', minimalDefinition('acme', { auth: oauth('    client_secret: ${PARTNER_SECRET}') }));
    const { errors } = await loadDefinition(file, { PARTNER_SECRET: '' });
    assert.deepEqual(errors.map((e) => e.message), ['environment variable PARTNER_SECRET is empty']);
  });

  it('a missing, empty or unreadable file is named', async () => {
    const file = folder.write('acme.yaml', minimalDefinition('acme', { auth: oauth('    client_secret_file: nope.txt') }));
    assert.deepEqual((await loadDefinition(file, {})).errors.map(formatDefinitionError), [
      `${file}: source.auth.client_secret_file (line 9): cannot read client_secret_file "nope.txt": no such file (ENOENT)`,
    ]);
    folder.write('nope.txt', ' \n');
    assert.deepEqual((await loadDefinition(file, {})).errors.map((e) => e.message), ['client_secret_file "nope.txt" is empty']);
    if (process.getuid?.() !== 0) {
      chmodSync(folder.write('nope.txt', SECRET), 0o000);
      assert.deepEqual((await loadDefinition(file, {})).errors.map((e) => e.message), ['cannot read client_secret_file "nope.txt": permission denied (EACCES)']);
    }
  });

  it('a missing variable outside the secret fields is an error too, and not a secret', async () => {
    const file = folder.write('acme.yaml', minimalDefinition('acme').replace('https://api.partner.example', 'https://${PARTNER_HOST}/v2'));
    assert.deepEqual((await loadDefinition(file, { TEST_SECRET: SECRET })).errors.map((e) => [e.path, e.message]), [
      ['source.base_url', 'environment variable PARTNER_HOST is not set'],
    ]);
    const { definition } = await loadDefinition(file, { TEST_SECRET: SECRET, PARTNER_HOST: 'api.partner.example' });
    assert.equal((definition?.source as RestSource | undefined)?.base_url, 'https://api.partner.example/v2');
    assert.deepEqual(definition?.secrets, [SECRET]);
  });
});
