/**
 * Running the CLI in-process for the onboarding tests (discover, init, check, backfill, reconcile
 * are each one call of `main`), and the edits docs/onboarding.md lists.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { main } from '../../src/cli/main.js';
import type { Io } from '../../src/cli/io.js';

export interface Ran {
  code: number;
  out: string;
  err: string;
}

export async function cli(args: readonly string[]): Promise<Ran> {
  let out = '';
  let err = '';
  const io: Io = { out: (t) => void (out += t.endsWith('\n') ? t : t + '\n'), err: (t) => void (err += t + '\n'), stdin: new PassThrough(), isTty: false, errIsTty: false };
  const code = await main(args, io);
  return { code, out, err };
}

/**
 * The edits of a draft for a partner-style partner (docs/onboarding.md): the two code
 * lists init cannot guess, given as maps. Each must change the file.
 */
export const PARTNER_STYLE_EDITS: [RegExp, string][] = [
  [/^( +)kyc_status_id: kycStatus$/m, '$1kyc_status_id: { from: kycStatus, map: { "0": pending, "1": approved, "2": rejected } }'],
  [/^( +)status: statusCode$/m, '$1status: { from: statusCode, map: { "1": pending, "2": approved, "3": declined, "4": reversed } }'],
];

export function applyEdits(file: string, edits: readonly [RegExp, string][]): void {
  let text = readFileSync(file, 'utf8');
  for (const [pattern, replacement] of edits) {
    const next = text.replace(pattern, replacement);
    if (next === text) throw new Error(`the edit ${pattern} changed nothing in ${file}`);
    text = next;
  }
  writeFileSync(file, text);
}

/**
 * A user's review of the draft: every `# TODO:` line read and deleted (`check` fails while one is
 * left). Returns how many there were. A TODO is confirmed, not an edit: what a confirmation
 * changes is a fixture's edit, counted apart.
 */
export function confirmTodos(file: string): number {
  const lines = readFileSync(file, 'utf8').split('\n');
  const kept = lines.filter((l) => !/^\s*#\s*TODO:/.test(l));
  writeFileSync(file, kept.join('\n'));
  return lines.length - kept.length;
}

/** The mapping lines (`<spec field>: <rule>`) of a definition's text, per stream. */
export function mappingLines(text: string): Map<string, string> {
  const lines = new Map<string, string>();
  let stream = '';
  let inFields = false;
  for (const line of text.split('\n')) {
    const s = /^ {2}(customers|transactions|activity):$/.exec(line);
    if (s) {
      stream = s[1] as string;
      inFields = false;
      continue;
    }
    if (/^ {6}fields:/.test(line)) {
      inFields = true;
      continue;
    }
    const m = /^ {8}([a-z_]+): (.+)$/.exec(line);
    if (inFields && m) lines.set(`${stream}.${m[1]}`, m[2] as string);
    else if (!/^ {8}#/.test(line)) inFields = inFields && /^ {8}/.test(line);
  }
  return lines;
}

/** How many mapping lines of the final definition the draft already had, word for word. */
export function unaided(draft: string, final: string): { right: number; total: number } {
  const before = mappingLines(draft);
  const after = mappingLines(final);
  let right = 0;
  for (const [key, rule] of after) if (before.get(key) === rule) right += 1;
  return { right, total: after.size };
}
