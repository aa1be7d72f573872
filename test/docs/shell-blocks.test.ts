/**
 * The commands in the documentation run as written. Every fenced block names its language; every
 * shell block either runs here or says, in a comment before it, why it cannot (a real partner, a
 * running server, docker...). The blocks that run are run page by page as a reader would copy
 * them (shell-blocks.ts), against the SQLite store, the sandbox partner and the local MariaDB, and
 * each of their commands must end with status 0, or with the status its `# exit N` comment gives.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../src/paths.js';
import { markdownFiles, readPage, type CodeBlock, type Page } from './markdown.js';
import { freePort } from '../support/ports.js';
import { SHELL_LANGS, makeWorkspace, notRunReason, runPage, type BlockRun, type Substitution } from './shell-blocks.js';

const root = packageRoot();

/** What the blocks of a page section must print (all of that section's blocks' output together). */
const EXPECTED_OUTPUT: Record<string, RegExp[]> = {
  'docs/cli.md#the-command-line': [/7 records: 4 valid, 3 invalid/, /lucky-casino/],
  'docs/onboarding.md#rehearsing-it': [
    /reconciled: propco \S+, no difference/,
    /reconciled: propco-replica \S+, no difference/,
    /customers\s+succeeded/,
  ],
  'docs/api.md#walkthrough-with-curl': [
    /"partner":"pushy-casino","variant":"igaming"/,
    /\{"accepted":2,"loaded":2,"waiting":0,"request_id":"([0-9a-f-]+)"\}[\s\S]*\{"accepted":2,"loaded":2,"waiting":0,"request_id":"\1"\}/,
    /\{"accepted":1,"loaded":0,"waiting":1,/,
    /"error":"validation_failed","message":"2 of 2 record\(s\) failed validation; nothing was stored"/,
    /"next_cursor":null/,
    /pushy-casino\s+transactions\s+never.*push/,
  ],
  'docs/console.md#users': [/console user olga added \(operator\)/, /console user max added \(manager\)/, /password: \S{10,}/],
};

const pages: Page[] = markdownFiles(root).map((file) => readPage(root, file));
const shellBlocks = pages.flatMap((p) => p.blocks.filter((b) => SHELL_LANGS.has(b.lang)));
const runnable = shellBlocks.filter((b) => notRunReason(b) === undefined);
const where = (b: CodeBlock): string => `${b.file}:${b.line}`;

describe('documentation shell blocks', () => {
  it('every fenced block names its language, and every shell block runs or says why not', () => {
    const unnamed = pages.flatMap((p) => p.blocks.filter((b) => b.lang === '').map(where));
    assert.deepEqual(unnamed, [], 'fenced blocks without a language (sh, text, yaml...)');
    const noReason = shellBlocks.filter((b) => notRunReason(b) === '').map(where);
    assert.deepEqual(noReason, [], '"not run:" needs a reason');
    assert.ok(runnable.length >= 5, `only ${runnable.length} shell blocks run`);
    assert.ok(shellBlocks.length > runnable.length, 'no block is marked "not run"');
  });

  it('every expected output names a section whose blocks run', () => {
    const sections = new Set(runnable.map((b) => `${b.file}#${b.section}`));
    for (const key of Object.keys(EXPECTED_OUTPUT)) assert.ok(sections.has(key), `no runnable block under ${key}`);
  });

  // Pages run side by side (most of their time is waiting on servers and subprocesses);
  // DOCS_PAGE=docs/x.md narrows the run to one page.
  const byPage = new Map<string, CodeBlock[]>();
  for (const block of runnable) {
    if (process.env.DOCS_PAGE && block.file !== process.env.DOCS_PAGE) continue;
    byPage.set(block.file, [...(byPage.get(block.file) ?? []), block]);
  }
  const results = new Map<string, Promise<BlockRun[]>>();
  before(function () {
    for (const [file, blocks] of byPage) {
      const result = runBlocks(blocks);
      result.catch(() => undefined); // awaited by the page's test
      results.set(file, result);
    }
  });

  for (const [file, blocks] of byPage) {
    it(`${file}: its ${blocks.length} shell block(s) run as written`, async function () {
      this.timeout(300_000);
      const runs = await (results.get(file) as Promise<BlockRun[]>);
      const problems: string[] = [];
      for (const run of runs) {
        for (const command of run.commands) {
          const failure = run.failures.find((f) => f.line >= command.first && f.line <= command.last);
          const status = failure?.status ?? 0;
          if (status !== command.expected) {
            problems.push(`${run.block.file}:${run.block.line + command.first}: \`${command.text.split('\n')[0]}\` ended with ${status}, expected ${command.expected}\n${run.stderr.slice(-1500)}`);
          }
        }
      }
      assert.deepEqual(problems, []);
      for (const [key, patterns] of Object.entries(EXPECTED_OUTPUT)) {
        if (!key.startsWith(`${file}#`)) continue;
        const output = runs.filter((r) => `${r.block.file}#${r.block.section}` === key).map((r) => r.stdout).join('\n');
        for (const pattern of patterns) assert.match(output, pattern, `${key}: output lacks ${pattern}`);
      }
    });
  }
});

/** Runs one page's blocks in a workspace of their own, with free ports and database names. */
async function runBlocks(blocks: readonly CodeBlock[]): Promise<BlockRun[]> {
  const dir = mkdtempSync(join(tmpdir(), 'docs-blocks-'));
  const ws = makeWorkspace(root, dir);
  const [sandboxPort, apiPort] = [await freePort(), await freePort()];
  const suffix = `${process.pid}_${Date.now()}`;
  const databases = [...new Set(blocks.flatMap((b) => b.lines.join('\n').match(/CREATE DATABASE (\w+)/g) ?? []))].map((m) => m.split(' ')[2] ?? '');
  const substitutions: Substitution[] = [
    [/127\.0\.0\.1:4010\b/g, `127.0.0.1:${sandboxPort}`],
    [/--port 4010\b/g, `--port ${sandboxPort}`],
    [/127\.0\.0\.1:8080\b/g, `127.0.0.1:${apiPort}`],
    [/\/tmp\/rehearsal\b/g, join(dir, 'rehearsal')],
    ...databases.map((db): Substitution => [new RegExp(`\\b${db}\\b`, 'g'), `${db}_${suffix}`]),
  ];
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !['STORE_URL', 'LOG_FORMAT', 'PORT'].includes(k)) env[k] = v;
  env.PORT = String(apiPort);
  try {
    return await runPage(blocks, ws, substitutions, env, 280_000);
  } finally {
    for (const db of databases) spawnSync('mysql', ['-h', '127.0.0.1', '-u', 'root', '-e', `DROP DATABASE IF EXISTS ${db}_${suffix}`]);
    rmSync(dir, { recursive: true, force: true });
  }
}
