/**
 * `partner-sync clients add|list|revoke`: the API's client credentials. `add` prints the secret
 * once (only a salted hash is kept); the variant comes from the partner's connector definition,
 * or from --variant for a partner that only pushes. `revoke`: the client's tokens stop working
 * within a few seconds on every `serve` process sharing the store.
 */
import { createClient, DEFAULT_REVOCATION_CACHE_MS, listClients, parseScopes, revokeClient, type ApiClient, type Scope } from '../../access/api-clients.js';
import { policyProblems, type PersonalDataPolicy } from '../../spec/personal-data.js';
import { isVariant, VARIANTS, type Variant } from '../../types.js';
import { withStore, type GlobalOptions } from '../context.js';
import { declaredValue, formatDefinitionError } from '../../config/load-definitions.js';
import { loadConfig } from '../definitions.js';
import { CliError, EXIT_OK, EXIT_USAGE, type Io } from '../io.js';
import { formatTable } from '../table.js';

export interface ClientsAddOptions {
  partner: string;
  variant?: string;
  scope?: string;
  affiliate?: string;
  /** `email=hash,first_name=drop`. */
  personalData?: string;
}

const fileStem = (file: string): string => file.replace(/^.*[\\/]/, '').replace(/\.ya?ml$/i, '');

/** `email=hash,first_name=drop` → the policy; a usage error naming what is wrong (a hash without its key too). */
export function parsePersonalData(text: string, env: NodeJS.ProcessEnv): PersonalDataPolicy {
  const policy: Record<string, string> = {};
  for (const part of text.split(',').map((p) => p.trim()).filter((p) => p !== '')) {
    const [field, rule, ...rest] = part.split('=').map((p) => p.trim());
    if (!field || !rule || rest.length > 0) throw new CliError(`--personal-data: ${JSON.stringify(part)} is not FIELD=keep|hash|drop (e.g. email=hash,first_name=drop)`, EXIT_USAGE);
    policy[field] = rule;
  }
  const problems = policyProblems(policy, env);
  if (problems.length > 0) throw new CliError(`--personal-data: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`, EXIT_USAGE);
  return policy as PersonalDataPolicy;
}

/** The partner's variant: its definition's, or --variant for a push-only partner; a usage error otherwise. */
async function resolveVariant(globals: GlobalOptions, partner: string, given: string | undefined): Promise<Variant> {
  if (given !== undefined && !isVariant(given)) throw new CliError(`--variant must be one of ${VARIANTS.join(', ')}, got ${JSON.stringify(given)}`, EXIT_USAGE);
  const config = await loadConfig(globals);
  const def = config.definitions.find((d) => d.partner === partner);
  if (def) {
    if (given !== undefined && given !== def.variant) {
      throw new CliError(`partner ${partner} is ${def.variant} in its connector definition; --variant ${given} contradicts it`, EXIT_USAGE);
    }
    return def.variant;
  }
  const own = config.errors.filter((e) => fileStem(e.file) === partner);
  if (own.length > 0) {
    // A definition that does not load here (often: its secrets live only in the worker's
    // environment) still names its variant.
    const declared = declaredVariant(own[0]!.file);
    if (declared && given !== undefined && given !== declared) {
      throw new CliError(`partner ${partner} is ${declared} in its connector definition; --variant ${given} contradicts it`, EXIT_USAGE);
    }
    if (declared) return declared;
    if (given === undefined) {
      throw new CliError(`the definition of partner ${partner} is invalid and names no variant (give --variant):\n` + own.map((e) => '  ' + formatDefinitionError(e)).join('\n'), EXIT_USAGE);
    }
  }
  if (given !== undefined) return given as Variant;
  throw new CliError(`partner ${partner} has no connector definition in ${config.dir}: give --variant ${VARIANTS.join('|')} for a partner that only pushes`, EXIT_USAGE);
}

/** The `variant:` of a definition file, read as plain YAML; undefined when unreadable or not a variant. */
function declaredVariant(file: string): Variant | undefined {
  const variant = declaredValue(file, 'variant');
  return isVariant(variant) ? variant : undefined;
}

export async function clientsAddCommand(globals: GlobalOptions, opts: ClientsAddOptions, io: Io): Promise<number> {
  if (opts.partner.trim() === '') throw new CliError('the partner id is empty', EXIT_USAGE);
  let scopes: Scope[] | undefined;
  try {
    scopes = opts.scope === undefined ? undefined : parseScopes(opts.scope);
  } catch (error) {
    throw new CliError(`--scope: ${(error as Error).message}`, EXIT_USAGE);
  }
  if (opts.affiliate !== undefined && opts.affiliate.trim() === '') throw new CliError('--affiliate is empty', EXIT_USAGE);
  const variant = await resolveVariant(globals, opts.partner, opts.variant);
  const personalData = opts.personalData !== undefined ? parsePersonalData(opts.personalData, process.env)
    : (await loadConfig(globals)).definitions.find((d) => d.partner === opts.partner)?.personal_data?.policy;
  return withStore(globals, async (store) => {
    const registered: { variant: string } | undefined = await store.knex('partners').where('partner_id', opts.partner).first('variant');
    if (registered && registered.variant !== variant) {
      throw new CliError(`partner ${opts.partner} is registered as ${registered.variant} in this store, not ${variant}`, EXIT_USAGE);
    }
    const other: { variant: string } | undefined = await store.knex('api_clients').where('partner_id', opts.partner).whereNot('variant', variant).first('variant');
    if (other) throw new CliError(`partner ${opts.partner} already has ${other.variant} API clients; a partner is one variant, not ${variant}`, EXIT_USAGE);
    const client = await createClient(store, { partner: opts.partner, variant, scopes, affiliate: opts.affiliate, personalData });
    const scope = client.scopes.join(' ');
    if (globals.json) {
      io.out(JSON.stringify({
        client_id: client.clientId, client_secret: client.clientSecret, partner: client.partner, variant: client.variant, scope,
        ...(client.affiliate !== undefined ? { affiliate: client.affiliate } : {}),
        ...(client.personalData ? { personal_data: client.personalData } : {}),
      }));
      return EXIT_OK;
    }
    io.out(`client_id:     ${client.clientId}`);
    io.out(`client_secret: ${client.clientSecret}`);
    io.out(`partner ${client.partner} (${client.variant}), scope ${scope}${client.affiliate !== undefined ? `, affiliate ${client.affiliate} only` : ''}${client.personalData ? `, personal data ${policyText(client.personalData)}` : ''}`);
    io.out('The secret is shown only now: keep it safe (the store keeps only a hash of it).');
    return EXIT_OK;
  });
}

const policyText = (p: PersonalDataPolicy): string => Object.entries(p).map(([f, r]) => `${f}=${r}`).join(',');

const clientJson = (c: ApiClient) => ({
  client_id: c.clientId, partner: c.partner, variant: c.variant, scope: c.scopes.join(' '),
  affiliate: c.affiliate ?? null, personal_data: c.personalData ?? null, created_at: c.createdAt, revoked_at: c.revokedAt ?? null,
});

export async function clientsListCommand(globals: GlobalOptions, opts: { partner?: string }, io: Io): Promise<number> {
  return withStore(globals, async (store) => {
    const clients = await listClients(store, opts);
    if (globals.json) {
      io.out(JSON.stringify(clients.map(clientJson)));
      return EXIT_OK;
    }
    if (clients.length === 0) {
      io.out(opts.partner ? `no API clients for partner ${opts.partner}` : 'no API clients (partner-sync clients add <partner> creates one)');
      return EXIT_OK;
    }
    io.out(formatTable(['CLIENT_ID', 'PARTNER', 'VARIANT', 'SCOPE', 'AFFILIATE', 'PERSONAL_DATA', 'CREATED', 'REVOKED'],
      clients.map((c) => [c.clientId, c.partner, c.variant, c.scopes.join(' '), c.affiliate ?? '', c.personalData ? policyText(c.personalData) : '', c.createdAt.slice(0, 19), c.revokedAt?.slice(0, 19) ?? ''])));
    return EXIT_OK;
  });
}

export async function clientsRevokeCommand(globals: GlobalOptions, opts: { clientId: string }, io: Io): Promise<number> {
  return withStore(globals, async (store) => {
    if (!(await revokeClient(store, opts.clientId))) throw new CliError(`no API client ${opts.clientId} (partner-sync clients list shows them)`, EXIT_USAGE);
    const seconds = Math.ceil(DEFAULT_REVOCATION_CACHE_MS / 1000);
    if (globals.json) io.out(JSON.stringify({ client_id: opts.clientId, revoked: true, effective_within_s: seconds }));
    else io.out(`client ${opts.clientId} revoked: its tokens stop working within ${seconds} s on every serve process of this store`);
    return EXIT_OK;
  });
}
