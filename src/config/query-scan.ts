/**
 * What a db stream's query is, read without a SQL parser: its named parameters and whether it is
 * one read-only SELECT. A definition's query runs against a partner's replica, so `check` refuses
 * anything that some dialect would read as more than the scan sees.
 */
/** A named parameter of a query (`:from`), at its offset. */
export interface QueryParameter {
  name: string;
  offset: number;
}

export interface ScannedQuery {
  /** Named parameters in order of appearance, outside quotes and comments (`x::date` is a cast, not a parameter). */
  parameters: QueryParameter[];
  /** `:name`s inside quotes or comments: the binder (knex) does not see quotes, so a bound name there is bound too. */
  hidden: QueryParameter[];
  /** What makes it more than one read-only SELECT, each at its offset; empty when fine. */
  problems: { offset: number; message: string }[];
}

// Words that make a statement write: data-modifying CTEs, SELECT … INTO (a table in PostgreSQL, a file in MySQL).
const WRITE_WORDS = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE', 'INTO']);
const WORD_START = /[A-Za-z_]/;
const WORD_PART = /[A-Za-z0-9_$]/;
const NAME_PART = /[A-Za-z0-9_]/;
// How the binder finds a name: anywhere, quotes and comments included.
const BINDER_NAME = /:(\w+)/g;

/**
 * Reads a db stream's query as MySQL, PostgreSQL and SQLite would, erring on the side of seeing
 * code: strings and quoted identifiers ('…', "…", `…`, quotes doubled), `-- ` and `/* *\/` comments
 * are skipped. A backslash (an escape in MySQL strings only), `#` (a comment in MySQL only) and
 * MySQL's executable `/*!` comments are refused, so no dialect sees a statement this scan does
 * not; so are `?` anywhere (a placeholder to the drivers, even in quotes) and `:name:` (an
 * identifier binding to knex). A query must be one SELECT (or WITH … SELECT): no `;`, no writing
 * words.
 */
export function scanQuery(sql: string): ScannedQuery {
  const parameters: QueryParameter[] = [];
  const hidden: QueryParameter[] = [];
  const problems: ScannedQuery['problems'] = [];
  const seen = new Set<string>();
  const problem = (offset: number, message: string): void => {
    if (seen.has(message)) return;
    seen.add(message);
    problems.push({ offset, message });
  };
  const skipped = (from: number, to: number): void => {
    for (const match of sql.slice(from, to).matchAll(BINDER_NAME)) hidden.push({ name: match[1] ?? '', offset: from + (match.index ?? 0) });
  };
  // Anywhere, quotes and comments included.
  for (let index = 0; index < sql.length; index += 1) {
    const c = sql.charAt(index);
    if (c === '?') problem(index, '? is a placeholder to the database drivers, even inside quotes: use the named parameters, and write a literal question mark as CHR(63)');
    if (c === '\\') problem(index, 'a backslash is not allowed in a query: MySQL reads it as an escape, PostgreSQL and SQLite do not');
  }
  let first: { word: string; offset: number } | undefined;
  const n = sql.length;
  let i = 0;
  scan: while (i < n) {
    const c = sql.charAt(i);
    const next = sql.charAt(i + 1);
    if (c === '-' && next === '-' && (i + 2 >= n || /\s/.test(sql.charAt(i + 2)))) {
      const end = sql.slice(i).search(/[\r\n]/);
      const to = end < 0 ? n : i + end + 1;
      skipped(i, to);
      i = to;
    } else if (c === '/' && next === '*') {
      if (sql.charAt(i + 2) === '!') {
        problem(i, 'a MySQL executable comment /*! … */ runs its content: not allowed');
        i += 3;
        continue;
      }
      const end = sql.indexOf('*/', i + 2);
      if (end < 0) {
        problem(i, 'a /* comment is not closed');
        break;
      }
      skipped(i, end + 2);
      i = end + 2;
    } else if (c === "'" || c === '"' || c === '`') {
      let j = i + 1;
      for (;;) {
        if (j >= n) {
          problem(i, `the quote ${c} is not closed`);
          break scan;
        }
        if (sql.charAt(j) === c) {
          if (sql.charAt(j + 1) !== c) break;
          j += 1;
        }
        j += 1;
      }
      skipped(i, j + 1);
      i = j + 1;
    } else if (c === '#') {
      problem(i, '# is not allowed outside quotes (a comment in MySQL, an operator in PostgreSQL): write -- comments');
      i += 1;
    } else if (c === ';') {
      problem(i, 'must be a single statement: remove the ; (a query is one SELECT)');
      i += 1;
    } else if (c === '$' && /[0-9]/.test(next)) {
      problem(i, '$1-style placeholders are not used: use the named parameters (:from, :date_from, …)');
      i += 2;
    } else if (c === ':') {
      if (next === ':') i += 2; // a PostgreSQL cast, x::date
      else if (WORD_START.test(next)) {
        let j = i + 1;
        while (j < n && NAME_PART.test(sql.charAt(j))) j += 1;
        const name = sql.slice(i + 1, j);
        parameters.push({ name, offset: i });
        if (sql.charAt(j) === ':' && sql.charAt(j + 1) !== ':') problem(i, `:${name}: is an identifier binding, not a value: write :${name}`);
        i = j;
      } else i += 1;
    } else if (WORD_START.test(c)) {
      let j = i;
      while (j < n && WORD_PART.test(sql.charAt(j))) j += 1;
      const word = sql.slice(i, j).toUpperCase();
      // The first word is checked on its own (it must be SELECT or WITH).
      if (first === undefined) first = { word, offset: i };
      else if (WRITE_WORDS.has(word)) problem(i, `must only read: ${word} is not allowed in a query`);
      i = j;
    } else if (/[0-9]/.test(c)) {
      let j = i;
      while (j < n && WORD_PART.test(sql.charAt(j))) j += 1;
      i = j;
    } else i += 1;
  }
  if (first === undefined) problems.unshift({ offset: 0, message: 'must be a SELECT statement' });
  else if (first.word !== 'SELECT' && first.word !== 'WITH') problems.unshift({ offset: first.offset, message: `must be a single SELECT (or WITH … SELECT), not ${first.word}` });
  problems.sort((a, b) => a.offset - b.offset);
  return { parameters, hidden, problems };
}
