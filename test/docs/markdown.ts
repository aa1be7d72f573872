/**
 * Reads the project's Markdown pages the way the documentation tests need them: the fenced code
 * blocks (language, text, the comment before them, the heading they sit under) and the headings'
 * anchors as GitHub renders them. Kept apart from the tests so that the shell-block runner and the
 * link check read a page the same way.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

export interface CodeBlock {
  /** Path of the page, relative to the package root. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The info string's first word ('' when the fence names none). */
  lang: string;
  /** The block's lines, without the fences and without the fence's own indentation. */
  lines: string[];
  /** The comment on the last non-blank line before the fence (`<!-- ... -->`), if any. */
  comment?: string;
  /** Anchor of the heading the block sits under ('' before the first heading). */
  section: string;
}

export interface Page {
  file: string;
  text: string;
  blocks: CodeBlock[];
  /** Anchors of every heading, as GitHub makes them (duplicates numbered -1, -2...). */
  anchors: Set<string>;
  /** Lines outside code blocks, with their 1-based numbers (for the link check). */
  prose: { line: number; text: string }[];
}

const SKIP_DIRS = new Set(['node_modules', 'dist', 'data', '.git', '.ci']);

/** Every Markdown page of the package: README.md and those of docs/, bench/ and the code folders. */
export function markdownFiles(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        if (!SKIP_DIRS.has(entry.name)) walk(join(dir, entry.name));
      } else if (entry.name.endsWith('.md')) {
        found.push(relative(root, join(dir, entry.name)));
      }
    }
  };
  walk(root);
  return found.sort();
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .replace(/`/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/ /g, '-');
}

export function readPage(root: string, file: string): Page {
  const text = readFileSync(join(root, file), 'utf8');
  const lines = text.split('\n');
  const blocks: CodeBlock[] = [];
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const prose: { line: number; text: string }[] = [];
  let section = '';
  let lastNonBlank = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const fence = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)/.exec(line);
    if (fence) {
      const indent = fence[1]?.length ?? 0;
      const marker = fence[2] ?? '```';
      const body: string[] = [];
      let j = i + 1;
      for (; j < lines.length; j++) {
        const inner = lines[j] ?? '';
        if (inner.trim().startsWith(marker) && inner.trim().replace(/[`~]/g, '') === '') break;
        body.push(inner.slice(Math.min(indent, inner.length - inner.trimStart().length)));
      }
      const comment = /^\s*<!--\s*(.*?)\s*-->\s*$/.exec(lastNonBlank)?.[1];
      blocks.push({ file, line: i + 1, lang: fence[3] ?? '', lines: body, ...(comment !== undefined ? { comment } : {}), section });
      i = j;
      lastNonBlank = '';
      continue;
    }
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const base = slug(heading[1] ?? '');
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      section = count === 0 ? base : `${base}-${count}`;
      anchors.add(section);
    }
    prose.push({ line: i + 1, text: line });
    if (line.trim() !== '') lastNonBlank = line;
  }
  return { file, text, blocks, anchors, prose };
}
