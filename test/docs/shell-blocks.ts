/**
 * Runs a page's shell blocks as a reader would: one shell per page, the blocks in page order (a
 * function or variable of one block is there for the next), each block's commands checked for
 * their exit status. The reader's machine is stood in for by a temporary copy of the checkout (or
 * an empty folder) and free ports, so that a run touches nothing of the checkout and no server
 * already listening; the substitutions are listed in docs/development.md.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import type { CodeBlock } from './markdown.js';

export const SHELL_LANGS = new Set(['sh', 'bash', 'shell', 'console', 'zsh']);

/** A block runs unless the comment before it says `not run: <reason>`. */
export function notRunReason(block: CodeBlock): string | undefined {
  const match = /^not run:\s*(.*)$/.exec(block.comment ?? '');
  return match ? match[1] : undefined;
}

export function runsInEmptyFolder(block: CodeBlock): boolean {
  return /^run:\s*in an empty folder$/.test(block.comment ?? '');
}

export interface Command {
  /** 1-based lines of the command within its block (continuations and heredocs included). */
  first: number;
  last: number;
  text: string;
  /** The status the page says it ends with (`# exit N`); 0 when it says none. */
  expected: number;
}

/**
 * The script of a block, line for line: in a session (lines starting with `$ `) the commands,
 * their continuations and heredoc bodies are kept and the output shown is blanked, so that a
 * line number of the script is a line number of the block.
 */
export function scriptLines(block: CodeBlock): string[] {
  const session = block.lines.some((l) => l.startsWith('$ '));
  if (!session) return [...block.lines];
  const out: string[] = [];
  let continued = false;
  let heredoc: string | undefined;
  for (const line of block.lines) {
    if (heredoc !== undefined) {
      out.push(line);
      if (line.trim() === heredoc) heredoc = undefined;
      continue;
    }
    let kept: string | undefined;
    if (line.startsWith('$ ')) kept = line.slice(2);
    else if (continued) kept = line;
    else if (/^\s*#/.test(line)) kept = line;
    out.push(kept ?? '');
    continued = kept !== undefined && kept.trimEnd().endsWith('\\');
    const here = kept === undefined ? null : /<<-?\s*'?"?(\w+)'?"?/.exec(kept);
    if (here) heredoc = here[1];
  }
  return out;
}

/** The commands of a script, each with the lines it spans. */
export function commandsOf(lines: readonly string[]): Command[] {
  const commands: Command[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (line.trim() === '' || /^\s*#/.test(line)) continue;
    let j = i;
    const here = /<<-?\s*'?"?(\w+)'?"?/.exec(line);
    if (here) {
      while (j + 1 < lines.length && (lines[j] ?? '').trim() !== here[1]) j++;
    } else {
      while (j + 1 < lines.length && (lines[j] ?? '').trimEnd().endsWith('\\')) j++;
    }
    const span = lines.slice(i, j + 1);
    const exit = span.map((l) => /#\s*exit\s+(\d+)\b/.exec(l)?.[1]).find((s) => s !== undefined);
    commands.push({ first: i + 1, last: j + 1, text: span.join('\n'), expected: exit === undefined ? 0 : Number(exit) });
    i = j;
  }
  return commands;
}


export interface Workspace {
  dir: string;
  checkout: string;
  empty: string;
  bin: string;
}

/** A temporary stand-in for a reader's checkout: config copied, the rest linked, partner-sync on PATH. */
export function makeWorkspace(root: string, dir: string): Workspace {
  const checkout = join(dir, 'checkout');
  const empty = join(dir, 'empty');
  const bin = join(dir, 'bin');
  for (const d of [checkout, empty, bin]) mkdirSync(d, { recursive: true });
  cpSync(join(root, 'config'), join(checkout, 'config'), { recursive: true });
  cpSync(join(root, 'package.json'), join(checkout, 'package.json'));
  for (const linked of ['bin', 'dist', 'src', 'samples', 'scripts', 'node_modules']) {
    if (existsSync(join(root, linked))) symlinkSync(join(root, linked), join(checkout, linked));
  }
  const shim = join(bin, 'partner-sync');
  writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${join(root, 'bin', 'partner-sync.js')}" "$@"\n`);
  chmodSync(shim, 0o755);
  return { dir, checkout, empty, bin };
}

export interface BlockRun {
  block: CodeBlock;
  commands: Command[];
  stdout: string;
  stderr: string;
  /** Commands that ended with a status other than 0: the 1-based line in the block and the status. */
  failures: { line: number; status: number }[];
}

/** Text replacements that move a block off the reader's fixed ports, folders and databases. */
export type Substitution = [RegExp, string];

/**
 * Runs the blocks of one page in one bash, in order, each from the checkout copy or the empty
 * folder; returns what each printed and which commands failed. Every process the page started
 * (servers put in the background) is stopped when it ends or after `timeoutMs`.
 */
export async function runPage(blocks: readonly CodeBlock[], ws: Workspace, substitutions: readonly Substitution[], env: Record<string, string>, timeoutMs: number): Promise<BlockRun[]> {
  const errLog = join(ws.dir, 'errors.tsv');
  writeFileSync(errLog, '');
  const driver = ['set -o pipefail', `trap '__s=$?; printf "%s\\t%s\\t%s\\n" "\${BASH_SOURCE[0]}" "$LINENO" "$__s" >> "${errLog}"' ERR`];
  const scripts = blocks.map((block, i) => {
    let text = scriptLines(block).join('\n');
    for (const [pattern, replacement] of substitutions) text = text.replace(pattern, replacement);
    const file = join(ws.dir, `block-${i}.sh`);
    writeFileSync(file, text + '\n');
    driver.push(`cd "${runsInEmptyFolder(block) ? ws.empty : ws.checkout}"`);
    driver.push(`source "${file}" > "${file}.out" 2> "${file}.err"`);
    return { block, file, commands: commandsOf(text.split('\n')) };
  });
  const driverFile = join(ws.dir, 'page.sh');
  writeFileSync(driverFile, driver.join('\n') + '\n');
  await new Promise<void>((resolve, reject) => {
    const child = spawn('bash', [driverFile], { cwd: ws.checkout, env: { ...env, PATH: `${ws.bin}:${env.PATH ?? ''}` }, detached: true, stdio: 'ignore' });
    const stopAll = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
      } catch {
        // the group is already gone
      }
    };
    const timer = setTimeout(() => {
      stopAll();
      reject(new Error(`the page's blocks did not finish within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('exit', () => {
      clearTimeout(timer);
      stopAll();
      resolve();
    });
  });
  const records = readFileSync(errLog, 'utf8').split('\n').filter((l) => l !== '').map((l) => l.split('\t'));
  return scripts.map(({ block, file, commands }) => ({
    block,
    commands,
    stdout: readFileSync(`${file}.out`, 'utf8'),
    stderr: readFileSync(`${file}.err`, 'utf8'),
    failures: records.filter(([source]) => source === file).map(([, line, status]) => ({ line: Number(line), status: Number(status) })),
  }));
}
