/**
 * The `# TODO:` comments left in a connector definition file: the choices `init` could not prove
 * (a time zone, a currency, a code map from a sample, a guessed parameter). Until a person has
 * confirmed each one (and deleted its line) the definition is a draft, and `check` fails on it:
 * a draft's guess is never silently trusted. Each TODO belongs to the stream whose block holds
 * it; one outside the streams (the source's `timezone`) belongs to every stream.
 */
import { readFileSync } from 'node:fs';

export interface DefinitionTodo {
  /** 1-based line number in the file. */
  line: number;
  text: string;
  /** The stream whose block holds it; undefined for the source and other top-level keys. */
  stream?: string;
}

const TODO = /^\s*#\s*TODO:\s*(.*)$/;

export function definitionTodos(file: string): DefinitionTodo[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const out: DefinitionTodo[] = [];
  let top = '';
  let stream: string | undefined;
  text.split(/\r?\n/).forEach((raw, i) => {
    const todo = TODO.exec(raw);
    if (todo) {
      out.push({ line: i + 1, text: (todo[1] ?? '').trim(), ...(top === 'streams' && stream !== undefined ? { stream } : {}) });
      return;
    }
    if (/^\s*(#|$)/.test(raw)) return;
    const key = /^(\s*)([A-Za-z_][\w-]*)\s*:/.exec(raw);
    if (!key) return;
    const indent = (key[1] ?? '').length;
    if (indent === 0) {
      top = key[2] as string;
      stream = undefined;
    } else if (top === 'streams' && indent === 2) stream = key[2];
  });
  return out;
}

/** The TODOs of `stream` (its own and those outside every stream). */
export const todosOf = (todos: readonly DefinitionTodo[], stream: string): DefinitionTodo[] => todos.filter((t) => t.stream === undefined || t.stream === stream);
