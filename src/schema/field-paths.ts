/** How far a body is walked. */
export interface WalkLimits {
  /** Nesting below the root that is walked; deeper values are summarised by their type at the cap. */
  maxDepth: number;
  /** Elements of one array walked (their paths fold into `path[]`); the rest are skipped. */
  maxArrayElements: number;
}

/** Called for each value met, with its field path; false skips what lies below it. */
export type FieldVisitor = (path: string, value: unknown) => boolean;

const PLAIN_KEY = /^[A-Za-z_$][\w$-]*$/;
/**
 * Keys that are data, not names: hex (transaction hashes), numbers, UUIDs, long strings. An object keyed by
 * them is a map (`transactionHashes: {"0xab…": [...]}`): its entries share one path, `map.*`.
 */
const DATA_KEY = /^(0x[0-9a-fA-F]+|-?\d+(\.\d+)?|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|.{41,})$/s;

/** The path of any entry of a map (`map.*`). */
export function anyKeyPath(parent: string): string {
  return parent === '' ? '*' : `${parent}.*`;
}

/**
 * `result.claimedTokens.tokens[].tokenId`; a map's entries are `map.*`; a key that is not a plain name is
 * quoted: `result["a.b"]`.
 */
export function childPath(parent: string, key: string): string {
  if (DATA_KEY.test(key)) return anyKeyPath(parent);
  if (PLAIN_KEY.test(key)) return parent === '' ? key : `${parent}.${key}`;
  return `${parent}[${JSON.stringify(key)}]`;
}

/**
 * Child paths already worked out, by parent path then key, and element paths (`p[]`) by parent path in a map
 * of their own, so that a key spelled `[]` cannot collide with them: bodies of one event type repeat the
 * same keys, and the two key tests and the concatenation were a sixth of learning an event. Bounded: past
 * the cap, paths are worked out each time.
 */
const knownChildPaths = new Map<string, Map<string, string>>();
const knownElementPaths = new Map<string, string>();
let knownPathCount = 0;
const MAX_KNOWN_PATHS = 20_000;

function cachedChildPath(parent: string, key: string): string {
  let children = knownChildPaths.get(parent);
  const known = children?.get(key);
  if (known !== undefined) return known;
  const path = childPath(parent, key);
  if (knownPathCount < MAX_KNOWN_PATHS) {
    if (!children) knownChildPaths.set(parent, (children = new Map()));
    children.set(key, path);
    knownPathCount += 1;
  }
  return path;
}

function cachedElementPath(parent: string): string {
  const known = knownElementPaths.get(parent);
  if (known !== undefined) return known;
  const path = `${parent}[]`;
  if (knownPathCount < MAX_KNOWN_PATHS) {
    knownElementPaths.set(parent, path);
    knownPathCount += 1;
  }
  return path;
}

/**
 * Visits every value of a parsed JSON body below its root, with its field path, in document order. Array
 * elements of any index share one path (`items[]`), so an array of a thousand like objects costs as much as
 * one. Bounded by depth and elements per array whatever the body; the visitor bounds the paths. Allocates
 * nothing once the body's paths are known.
 */
export function walkFields(body: unknown, limits: WalkLimits, visit: FieldVisitor): void {
  walk(body, '', 0, limits, visit);
}

function walk(value: unknown, path: string, depth: number, limits: WalkLimits, visit: FieldVisitor): void {
  if (depth >= limits.maxDepth || value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    const elementPath = cachedElementPath(path);
    const n = Math.min(value.length, limits.maxArrayElements);
    for (let i = 0; i < n; i += 1) if (visit(elementPath, value[i])) walk(value[i], elementPath, depth + 1, limits, visit);
    return;
  }
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const child = (value as Record<string, unknown>)[key];
    const keyPath = cachedChildPath(path, key);
    if (visit(keyPath, child)) walk(child, keyPath, depth + 1, limits, visit);
  }
}
