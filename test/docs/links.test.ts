/**
 * Every relative link of the Markdown pages leads somewhere: the file exists, and an `#anchor`
 * names a heading of the page it points at. The README is a map; a map with a dead road is worse
 * than none.
 */
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { packageRoot } from '../../src/paths.js';
import { markdownFiles, readPage, type Page } from './markdown.js';

const root = packageRoot();

interface Link {
  file: string;
  line: number;
  target: string;
}

/** Relative links of a page's prose (inline code and code blocks left out). */
function relativeLinks(page: Page): Link[] {
  const links: Link[] = [];
  for (const { line, text } of page.prose) {
    const plain = text.replace(/`[^`]*`/g, '');
    for (const match of plain.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1] ?? '';
      if (/^[a-z]+:/i.test(target)) continue;
      links.push({ file: page.file, line, target });
    }
  }
  return links;
}

/** Why a link does not resolve, or undefined when it does. */
function problem(link: Link, pages: Map<string, Page>): string | undefined {
  const [path = '', anchor] = link.target.split('#', 2);
  const file = path === '' ? link.file : normalize(join(dirname(link.file), path));
  if (!existsSync(join(root, file))) return `${file} does not exist`;
  if (anchor === undefined) return undefined;
  if (statSync(join(root, file)).isDirectory() || !file.endsWith('.md')) return `#${anchor} on ${file}, which is not a Markdown page`;
  const target = pages.get(file) ?? readPage(root, file);
  return target.anchors.has(anchor) ? undefined : `${file} has no heading #${anchor}`;
}

describe('documentation links', () => {
  const pages = new Map(markdownFiles(root).map((file) => [file, readPage(root, file)] as const));

  it('finds the README, the docs pages and the links between them', () => {
    assert.ok(pages.has('README.md'));
    assert.ok(pages.has('docs/loading.md'));
    const readmeLinks = relativeLinks(pages.get('README.md') as Page).map((l) => l.target);
    for (const page of [...pages.keys()].filter((f) => f.startsWith('docs/'))) {
      assert.ok(readmeLinks.includes(page), `README.md does not link ${page}`);
    }
  });

  it('every relative link of every page resolves to a file and, with #anchor, to a heading', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const page of pages.values()) {
      for (const link of relativeLinks(page)) {
        checked++;
        const why = problem(link, pages);
        if (why) broken.push(`${link.file}:${link.line}: (${link.target}): ${why}`);
      }
    }
    assert.ok(checked > 50, `only ${checked} links found: is the link pattern still right?`);
    assert.deepEqual(broken, []);
  });
});
