/**
 * Per-postback signing secrets, derived rather than stored. A receiver checks our HMAC with the
 * secret, so we need the secret itself at delivery time: a hash (as API client secrets are kept)
 * cannot sign. Instead of encrypting it into the store, the store keeps a random salt per postback
 * and the secret is HMAC-SHA256(POSTBACK_SECRET_KEY, salt): nothing in the store file is the
 * secret or decrypts to it, there is no ciphertext format to version, and a new salt rotates it.
 * The key comes from the environment (POSTBACK_SECRET_KEY, or a file named by
 * POSTBACK_SECRET_KEY_FILE), never from the command line; losing it means re-issuing secrets.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';

export const SECRET_KEY_ENV = 'POSTBACK_SECRET_KEY';
const MIN_KEY_LENGTH = 32;

/** The master key from the environment; throws naming the variable when absent or too short. */
export function secretKeyFromEnv(env: NodeJS.ProcessEnv): string {
  let key = env[SECRET_KEY_ENV]?.trim();
  const file = env[`${SECRET_KEY_ENV}_FILE`];
  if (!key && file) {
    try {
      key = readFileSync(file, 'utf8').trim();
    } catch (error) {
      throw new Error(`${SECRET_KEY_ENV}_FILE: cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { cause: error });
    }
  }
  if (!key) throw new Error(`${SECRET_KEY_ENV} is not set: postback secrets are derived from it (at least ${MIN_KEY_LENGTH} characters, e.g. \`openssl rand -hex 32\`)`);
  if (key.length < MIN_KEY_LENGTH) throw new Error(`${SECRET_KEY_ENV} is too short: at least ${MIN_KEY_LENGTH} characters, got ${key.length}`);
  return key;
}

export const newSalt = (): string => randomBytes(16).toString('hex');

/** The signing secret of a postback: what `postbacks add` shows once and every delivery signs with. */
export function deriveSecret(key: string, salt: string): string {
  return 'pbs_' + createHmac('sha256', key).update(`postback-secret:${salt}`).digest('base64url');
}

/** The signature header's value: `v1=` + hex HMAC-SHA256(secret, `${timestamp}.${signed}`). */
export function signature(secret: string, timestamp: number, signed: string): string {
  return 'v1=' + createHmac('sha256', secret).update(`${timestamp}.${signed}`).digest('hex');
}
