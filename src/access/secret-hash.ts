/**
 * API client secrets and console passwords are kept only as a salted slow hash: scrypt (node:crypto) with a random salt per
 * secret, its parameters stored beside the hash so that they can be raised later without making
 * older secrets unverifiable. Comparison is constant-time (crypto.timingSafeEqual).
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

export interface KdfParams {
  alg: 'scrypt';
  N: number;
  r: number;
  p: number;
  keylen: number;
}

/** About 50 ms and 16 MiB per hash: slow for a guesser, paid once per token (an hour) by a partner. */
export const DEFAULT_KDF: KdfParams = { alg: 'scrypt', N: 16384, r: 8, p: 1, keylen: 32 };

export interface SecretHash {
  kdf: string;
  salt: string;
  hash: string;
}

function derive(secret: string, salt: Buffer, params: KdfParams): Promise<Buffer> {
  const options: ScryptOptions = { N: params.N, r: params.r, p: params.p, maxmem: 128 * params.N * params.r * 2 };
  return new Promise((resolve, reject) => {
    scrypt(secret, salt, params.keylen, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

export async function hashSecret(secret: string, params: KdfParams = DEFAULT_KDF): Promise<SecretHash> {
  const salt = randomBytes(16);
  const hash = await derive(secret, salt, params);
  return { kdf: JSON.stringify(params), salt: salt.toString('base64'), hash: hash.toString('base64') };
}

function parseKdf(text: string): KdfParams {
  const value = JSON.parse(text) as Partial<KdfParams>;
  if (value.alg !== 'scrypt' || !Number.isInteger(value.N) || !Number.isInteger(value.r) || !Number.isInteger(value.p) || !Number.isInteger(value.keylen)) {
    throw new Error(`unsupported secret hash parameters: ${text}`);
  }
  return value as KdfParams;
}

/** True when `secret` hashes to `stored`; the comparison takes the same time wherever the bytes differ. */
export async function verifySecret(secret: string, stored: SecretHash): Promise<boolean> {
  const params = parseKdf(stored.kdf);
  const expected = Buffer.from(stored.hash, 'base64');
  const actual = await derive(secret, Buffer.from(stored.salt, 'base64'), params);
  // Equal lengths by construction (same keylen), whatever the length of the secret presented.
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** A hash of nothing anyone knows: checked against when the client id is unknown, so an unknown id costs what a wrong secret costs. */
let decoy: Promise<SecretHash> | undefined;
export function decoyHash(): Promise<SecretHash> {
  decoy ??= hashSecret(randomBytes(32).toString('base64url'));
  return decoy;
}
