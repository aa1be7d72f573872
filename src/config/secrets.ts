/**
 * Secrets of a connector definition. A definition never holds a secret: a secret field takes a
 * `${ENV_VAR}` reference (the whole value or embedded) or its `<field>_file` sibling names a file
 * whose trimmed content is the secret. Which fields are secret comes from the `x-secret` marks of
 * the definition schema, so a new secret field needs only its mark. `${ENV_VAR}` references are
 * resolved in every string of a definition (base_url may be `https://${PARTNER_HOST}`); `$${`
 * writes a literal `${`.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';

/** A problem found while resolving references; `path` is the key path in the definition. */
export interface SecretProblem {
  path: string[];
  message: string;
}

export interface ResolvedReferences {
  /** A copy of the input with references resolved and every `<field>_file` replaced by `<field>`. */
  value: unknown;
  /** Every secret value resolved (whole values and the environment values inside them). */
  secrets: string[];
  problems: SecretProblem[];
  /** Key paths (joined with `.`) whose value could not be resolved: later checks skip them. */
  unresolved: Set<string>;
}

export interface ResolveOptions {
  /** The definition schema, whose `x-secret` marks say which fields are secret. */
  schema: SchemaNode;
  env: NodeJS.ProcessEnv;
  /** Folder relative `<field>_file` paths are read from (the definition file's folder). */
  baseDir: string;
}

/** The parts of a JSON Schema node this module reads. */
export interface SchemaNode {
  $ref?: string;
  $defs?: Record<string, SchemaNode>;
  properties?: Record<string, SchemaNode | boolean>;
  additionalProperties?: SchemaNode | boolean;
  oneOf?: (SchemaNode | boolean)[];
  anyOf?: (SchemaNode | boolean)[];
  allOf?: (SchemaNode | boolean)[];
  const?: unknown;
  'x-secret'?: boolean;
}

/** Suffix of the sibling key holding the path of a file with the secret. */
export const SECRET_FILE_SUFFIX = '_file';

const REFERENCE = /\$\$\{|\$\{([^}]*)\}?/g;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface Interpolated {
  /** The text with references replaced; undefined when a reference failed. */
  value?: string;
  /** Names of the variables referenced (valid names only). */
  variables: string[];
  /** The values substituted, in order. */
  substituted: string[];
  problems: string[];
}

/** Replaces `${NAME}` by the environment's value; `$${` is a literal `${`. */
export function interpolate(text: string, env: NodeJS.ProcessEnv): Interpolated {
  const result: Interpolated = { variables: [], substituted: [], problems: [] };
  if (!text.includes('${')) {
    result.value = text;
    return result;
  }
  const value = text.replace(REFERENCE, (match: string, name: string | undefined) => {
    if (match === '$${') return '${';
    if (!match.endsWith('}')) {
      result.problems.push(`unterminated reference ${JSON.stringify(match)}: write \${NAME}, or $\${ for a literal \${`);
      return match;
    }
    if (name === undefined || !VARIABLE_NAME.test(name)) {
      result.problems.push(`malformed reference ${match}: a variable name is letters, digits and _, not starting with a digit`);
      return match;
    }
    result.variables.push(name);
    const found = env[name];
    if (found === undefined) {
      result.problems.push(`environment variable ${name} is not set`);
      return match;
    }
    result.substituted.push(found);
    return found;
  });
  if (result.problems.length === 0) result.value = value;
  return result;
}

/** Where a secret field sits: the object's key path and the field's key. */
export interface SecretLocation {
  path: string[];
  key: string;
}

/**
 * The secret fields of `data` by the schema's `x-secret` marks: every object whose schema node has a
 * property marked secret and that holds that key or its `<key>_file` sibling. Branches of
 * oneOf/anyOf are followed when their `const` properties match the data (the auth `type`).
 */
export function secretLocations(schema: SchemaNode, data: unknown): SecretLocation[] {
  const found: SecretLocation[] = [];
  const seen = new Set<string>();
  const walk = (node: SchemaNode | boolean | undefined, value: unknown, path: string[], depth: number): void => {
    if (depth > 64 || typeof node !== 'object' || !isObject(value)) return;
    const resolved = deref(schema, node);
    for (const target of resolved === node ? [node] : [node, resolved]) {
      for (const [key, property] of Object.entries(target.properties ?? {})) {
        if (typeof property !== 'object') continue;
        if (isSecretNode(schema, property)) {
          if (Object.hasOwn(value, key) || Object.hasOwn(value, key + SECRET_FILE_SUFFIX)) {
            const id = JSON.stringify([...path, key]);
            if (!seen.has(id)) {
              seen.add(id);
              found.push({ path, key });
            }
          }
        } else if (Object.hasOwn(value, key)) {
          walk(property, value[key], [...path, key], depth + 1);
        }
      }
      const extra = target.additionalProperties;
      if (typeof extra === 'object') {
        for (const [key, child] of Object.entries(value)) {
          if (!Object.hasOwn(target.properties ?? {}, key)) walk(extra, child, [...path, key], depth + 1);
        }
      }
      for (const branch of [...(target.oneOf ?? []), ...(target.anyOf ?? []), ...(target.allOf ?? [])]) {
        if (typeof branch === 'object' && branchMatches(schema, branch, value)) walk(branch, value, path, depth + 1);
      }
    }
  };
  walk(schema, data, [], 0);
  return found;
}

/** The names of all fields marked `x-secret` anywhere in the schema (for documentation and tests). */
export function secretFieldNames(schema: SchemaNode): string[] {
  const names = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (isObject(node)) {
      const properties = node.properties;
      if (isObject(properties)) {
        for (const [key, property] of Object.entries(properties)) {
          if (isObject(property) && property['x-secret'] === true) names.add(key);
        }
      }
      Object.values(node).forEach(visit);
    }
  };
  visit(schema);
  return [...names].sort();
}

/**
 * Resolves `${ENV_VAR}` references in every string of `data` and the secret fields (references or
 * `<field>_file`). A problem names the variable or file, never a value.
 */
export function resolveReferences(data: unknown, options: ResolveOptions): ResolvedReferences {
  const secrets = new Set<string>();
  const problems: SecretProblem[] = [];
  const unresolved = new Set<string>();
  // Object key path → its secret keys.
  const secretAt = new Map<string, Set<string>>();
  for (const { path, key } of secretLocations(options.schema, data)) {
    const id = JSON.stringify(path);
    secretAt.set(id, (secretAt.get(id) ?? new Set()).add(key));
  }

  const problem = (path: string[], message: string): void => {
    problems.push({ path, message });
    unresolved.add(path.join('.'));
  };

  const copy = (value: unknown, path: string[]): unknown => {
    if (typeof value === 'string') {
      const result = interpolate(value, options.env);
      for (const message of result.problems) problem(path, message);
      return result.value ?? value;
    }
    if (Array.isArray(value)) return value.map((item, index) => copy(item, [...path, String(index)]));
    if (!isObject(value)) return value;
    const out: Record<string, unknown> = {};
    const secretKeys = secretAt.get(JSON.stringify(path)) ?? new Set<string>();
    for (const [key, child] of Object.entries(value)) {
      if (secretKeys.has(key)) continue;
      const secretKey = key.endsWith(SECRET_FILE_SUFFIX) ? key.slice(0, -SECRET_FILE_SUFFIX.length) : undefined;
      if (secretKey !== undefined && secretKeys.has(secretKey)) continue;
      out[key] = copy(child, [...path, key]);
    }
    for (const key of secretKeys) {
      const fileKey = key + SECRET_FILE_SUFFIX;
      const hasValue = Object.hasOwn(value, key);
      const hasFile = Object.hasOwn(value, fileKey);
      // Both or neither: the schema reports it; keep the fields so its message stands alone.
      if (hasValue === hasFile) {
        if (hasValue) {
          out[key] = value[key];
          out[fileKey] = value[fileKey];
        }
        continue;
      }
      if (hasValue) {
        const resolved = resolveSecretValue(value[key], [...path, key], fileKey);
        if (resolved !== undefined) out[key] = resolved;
      } else {
        const resolved = resolveSecretFile(value[fileKey], [...path, fileKey], key);
        if (resolved !== undefined) out[key] = resolved;
      }
    }
    return out;
  };

  const resolveSecretValue = (raw: unknown, path: string[], fileKey: string): string | undefined => {
    if (typeof raw !== 'string') return undefined; // a type error, reported by the schema
    const result = interpolate(raw, options.env);
    if (result.variables.length === 0 && result.problems.length === 0) {
      problem(path, `secret fields take \${ENV_VAR} or ${fileKey}, never a literal`);
      return undefined;
    }
    for (const message of result.problems) problem(path, message);
    if (result.value === undefined) return undefined;
    if (result.value === '') {
      problem(path, `environment variable ${result.variables.join(', ')} is empty`);
      return undefined;
    }
    secrets.add(result.value);
    for (const part of result.substituted) if (part !== '') secrets.add(part);
    return result.value;
  };

  const resolveSecretFile = (raw: unknown, path: string[], key: string): string | undefined => {
    if (typeof raw !== 'string') return undefined;
    const name = interpolate(raw, options.env);
    for (const message of name.problems) problem(path, message);
    if (name.value === undefined) return undefined;
    const file = isAbsolute(name.value) ? name.value : resolve(options.baseDir, name.value);
    let content: string;
    try {
      content = readFileSync(file, 'utf8').trim();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      problem(path, `cannot read ${key}${SECRET_FILE_SUFFIX} ${JSON.stringify(name.value)}: ${describeFsError(code)}`);
      return undefined;
    }
    if (content === '') {
      problem(path, `${key}${SECRET_FILE_SUFFIX} ${JSON.stringify(name.value)} is empty`);
      return undefined;
    }
    secrets.add(content);
    return content;
  };

  const value = copy(data, []);
  return { value, secrets: [...secrets], problems, unresolved };
}

function describeFsError(code: string | undefined): string {
  switch (code) {
    case 'ENOENT':
      return 'no such file (ENOENT)';
    case 'EACCES':
    case 'EPERM':
      return `permission denied (${code})`;
    case 'EISDIR':
      return 'is a folder, not a file (EISDIR)';
    default:
      return code ?? 'unreadable';
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Follows local `$ref`s (`#/$defs/name`). */
function deref(root: SchemaNode, node: SchemaNode): SchemaNode {
  let current = node;
  for (let hops = 0; current.$ref !== undefined && hops < 32; hops++) {
    const match = /^#\/\$defs\/([^/]+)$/.exec(current.$ref);
    const target = match?.[1] === undefined ? undefined : root.$defs?.[match[1]];
    if (target === undefined) return current;
    current = target;
  }
  return current;
}

function isSecretNode(root: SchemaNode, node: SchemaNode): boolean {
  return node['x-secret'] === true || deref(root, node)['x-secret'] === true;
}

function branchMatches(root: SchemaNode, branch: SchemaNode, value: Record<string, unknown>): boolean {
  const node = deref(root, branch);
  for (const [key, property] of Object.entries(node.properties ?? {})) {
    // A missing tag matches every branch: with `type` left out, every field that could be secret is.
    if (typeof property === 'object' && Object.hasOwn(property, 'const') && value[key] !== undefined && value[key] !== property.const) return false;
  }
  return true;
}
