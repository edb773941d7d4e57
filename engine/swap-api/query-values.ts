/**
 * A query string's values as `URLSearchParams.get` reads them, without URLSearchParams for the
 * queries clients send. `parseQuoteParams` reads a query through `QueryValues`; URLSearchParams is
 * one, and `QueryReader.read` gives another.
 *
 * Why: GET /swap/v1/quote parses a query per request, and `new URLSearchParams` (its entry list,
 * a string per name and value) plus its lookups cost several times the rest of the parse. A query
 * of printable ASCII without `%` or `+` decodes to itself under the WHATWG rules URLSearchParams
 * follows (split at `&`, empty pieces skipped, name and value split at the first `=`), so
 * `QueryReader` reads such a query in place and cuts only the values asked for. Any other
 * query (percent escapes, `+` for a space, non-ASCII, a leading `?`) goes to URLSearchParams.
 */

/** What `parseQuoteParams` reads of a query: URLSearchParams.get's contract. */
export interface QueryValues {
  /** The first value of `name`, or null when the query has none. */
  get(name: string): string | null;
}

const AMPERSAND = 0x26;
const EQUALS = 0x3d;
const PERCENT = 0x25;
const PLUS = 0x2b;
const QUESTION_MARK = 0x3f;
const FIRST_PRINTABLE = 0x20;
const LAST_PRINTABLE = 0x7e;

/**
 * Reads queries, a plain one in place: the segments' offsets in reused arrays (one reader per
 * caller, reused by each `read`; single-threaded). Names in `joined` given more than once read as
 * their values joined with `,` (the official client sends a list as repeated keys).
 */
export class QueryReader implements QueryValues {
  private query = '';
  private count = 0;
  private readonly starts: number[] = [];
  /** Where each segment's name ends: its `=`, or its end when it has none. */
  private readonly nameEnds: number[] = [];
  private readonly ends: number[] = [];

  constructor(private readonly joined: readonly string[] = []) {}

  /**
   * The values of `query` (the text after `?`), valid until the next `read`: this reader when the
   * query is plain (see the file's comment), else URLSearchParams.
   */
  read(query: string): QueryValues {
    if (this.readPlain(query)) return this;
    this.count = 0;
    const params = new URLSearchParams(query);
    for (const name of this.joined) {
      const all = params.getAll(name);
      if (all.length > 1) params.set(name, all.join(','));
    }
    return params;
  }

  get(name: string): string | null {
    const first = this.indexOf(name, 0);
    if (first < 0) return null;
    let value = this.valueAt(first);
    if (this.joined.includes(name)) {
      for (let k = this.indexOf(name, first + 1); k >= 0; k = this.indexOf(name, k + 1)) value += `,${this.valueAt(k)}`;
    }
    return value;
  }

  /** Reads a plain `query` in place; false for any other. */
  private readPlain(query: string): boolean {
    this.count = 0;
    if (query.charCodeAt(0) === QUESTION_MARK) return false;
    let start = 0;
    let nameEnd = -1;
    for (let i = 0; i <= query.length; i++) {
      const c = i < query.length ? query.charCodeAt(i) : AMPERSAND;
      if (c === AMPERSAND) {
        if (i > start) {
          this.starts[this.count] = start;
          this.nameEnds[this.count] = nameEnd < 0 ? i : nameEnd;
          this.ends[this.count] = i;
          this.count++;
        }
        start = i + 1;
        nameEnd = -1;
      } else if (c === EQUALS) {
        if (nameEnd < 0) nameEnd = i;
      } else if (c < FIRST_PRINTABLE || c > LAST_PRINTABLE || c === PERCENT || c === PLUS) {
        return false;
      }
    }
    this.query = query;
    return true;
  }

  /** The first segment from `from` on named `name`, or -1. */
  private indexOf(name: string, from: number): number {
    for (let k = from; k < this.count; k++) {
      const start = this.starts[k]!;
      if (this.nameEnds[k]! - start === name.length && this.query.startsWith(name, start)) return k;
    }
    return -1;
  }

  private valueAt(k: number): string {
    const nameEnd = this.nameEnds[k]!;
    const end = this.ends[k]!;
    return nameEnd === end ? '' : this.query.slice(nameEnd + 1, end);
  }
}
