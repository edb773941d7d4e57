/**
 * Splits an SQL script into its statements at top-level semicolons, as psql does: semicolons
 * inside quotes ('…', "…"), dollar-quoted bodies ($$…$$, $tag$…$tag$) and comments (-- …, nested
 * block comments) do not end a statement. Comment-only pieces are dropped.
 */
export function splitSqlStatements(script: string): string[] {
  const out: string[] = [];
  let start = 0;
  let i = 0;
  const n = script.length;
  const push = (end: number): void => {
    const text = script.slice(start, end).trim();
    if (stripComments(text).trim() !== '') out.push(text);
  };
  while (i < n) {
    const c = script[i]!;
    if (c === '-' && script[i + 1] === '-') {
      const eol = script.indexOf('\n', i);
      i = eol < 0 ? n : eol + 1;
    } else if (c === '/' && script[i + 1] === '*') {
      i = skipBlockComment(script, i);
    } else if (c === "'" || c === '"') {
      i = skipQuoted(script, i, c);
    } else if (c === '$') {
      const tag = /^\$[A-Za-z_]?[A-Za-z0-9_]*\$/.exec(script.slice(i, i + 64));
      if (tag === null) {
        i++;
      } else {
        const close = script.indexOf(tag[0], i + tag[0].length);
        i = close < 0 ? n : close + tag[0].length;
      }
    } else if (c === ';') {
      push(i);
      start = ++i;
    } else {
      i++;
    }
  }
  push(n);
  return out;
}

function skipQuoted(s: string, i: number, quote: string): number {
  for (let j = i + 1; j < s.length; j++) {
    if (s[j] === quote) {
      if (s[j + 1] === quote) j++;
      else return j + 1;
    }
  }
  return s.length;
}

function skipBlockComment(s: string, i: number): number {
  let depth = 0;
  for (let j = i; j < s.length - 1; j++) {
    if (s[j] === '/' && s[j + 1] === '*') {
      depth++;
      j++;
    } else if (s[j] === '*' && s[j + 1] === '/') {
      depth--;
      j++;
      if (depth === 0) return j + 1;
    }
  }
  return s.length;
}

function stripComments(text: string): string {
  return text.replace(/--[^\n]*/g, '').replace(/\/\*[\s\S]*?\*\//g, '');
}
