/**
 * A strict command line: a command name that does not exist is a usage error (exit 2), with or
 * without `--help`. Commander prints the enclosing help and exits 0 for `postbacks --help`, and
 * reports `commissions postbacks` as an excess argument: a typo in a script's subcommand would
 * pass silently or be misnamed. This walk finds the first command word that names nothing,
 * before commander parses (and before any help is printed), and names the nearest command.
 *
 * The walk only reads the declared tree: option tokens are skipped (with their value when the
 * option takes one), a command with subcommands and no arguments of its own must be given a
 * subcommand's name, and the walk stops at the first command without subcommands, whose words
 * are its arguments.
 */
import type { Command, Option } from 'commander';

export interface UnknownCommand {
  /** The command words before the unknown one (`partner-sync report`). */
  parent: string;
  name: string;
  /** The closest command name at that level. */
  nearest: string | undefined;
}

const findOption = (chain: readonly Command[], token: string): Option | undefined => {
  const flag = token.startsWith('--') ? token.split('=')[0] : token.slice(0, 2);
  for (const cmd of chain) {
    const hit = cmd.options.find((o) => o.long === flag || o.short === flag);
    if (hit) return hit;
  }
  return undefined;
};

/** Whether the option's value is the next token (not attached as `--x=v` or `-xV`). */
function consumesNext(option: Option, token: string, next: string | undefined): boolean {
  if (token.includes('=') || (!token.startsWith('--') && token.length > 2)) return false;
  if (option.required) return true;
  return option.optional && next !== undefined && !next.startsWith('-');
}

/** The first unknown command word in `argv`, or undefined when every command word is known. */
export function findUnknownCommand(program: Command, argv: readonly string[]): UnknownCommand | undefined {
  const chain: Command[] = [program];
  let cmd = program;
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] as string;
    if (token === '--') return undefined;
    if (token.startsWith('-') && token !== '-') {
      const option = findOption(chain, token);
      if (option && consumesNext(option, token, argv[i + 1])) i++;
      continue;
    }
    // `help <command>` at a level with subcommands looks up the next word at the same level.
    if (token === 'help' && !cmd.commands.some((c) => c.name() === 'help')) continue;
    const sub = cmd.commands.find((c) => c.name() === token || c.aliases().includes(token));
    if (sub) {
      if (sub.commands.length === 0) return undefined;
      cmd = sub;
      chain.push(sub);
      continue;
    }
    if (cmd.registeredArguments.length > 0) return undefined;
    const names = cmd.commands.map((c) => c.name());
    return { parent: chain.map((c) => c.name()).join(' '), name: token, nearest: nearestName(token, names) };
  }
  return undefined;
}

/** `partner-sync report: unknown command 'afiliates' (nearest: 'affiliates'); partner-sync report --help lists the commands` */
export function formatUnknownCommand(u: UnknownCommand): string {
  const nearest = u.nearest ? ` (nearest: '${u.nearest}')` : '';
  return `${u.parent}: unknown command '${u.name}'${nearest}; ${u.parent} --help lists the commands`;
}

/** A name the word starts (a shortened command) first, else the fewest edits; ties in declaration order. */
export function nearestName(word: string, names: readonly string[]): string | undefined {
  const lower = word.toLowerCase();
  const prefixed = names.filter((n) => n.startsWith(lower));
  if (prefixed.length > 0) return prefixed.reduce((a, b) => (b.length < a.length ? b : a));
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const name of names) {
    const d = editDistance(lower, name);
    if (d < bestDistance) {
      best = name;
      bestDistance = d;
    }
  }
  return best;
}

/** Optimal string alignment distance: insertions, deletions, substitutions, adjacent swaps. */
function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min((d[i - 1]?.[j] ?? 0) + 1, (d[i]?.[j - 1] ?? 0) + 1, (d[i - 1]?.[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, (d[i - 2]?.[j - 2] ?? 0) + 1);
      (d[i] as number[])[j] = v;
    }
  }
  return d[a.length]?.[b.length] ?? 0;
}
