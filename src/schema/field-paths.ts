import { JSON_TYPE_BIT, jsonTypeOf, type JsonTypeBits } from './json-types.js';

/** What one body shows at one field path: its types there and one example scalar. */
export interface FieldSighting {
  types: JsonTypeBits;
  /** A scalar seen at the path (strings as they are; the caller truncates and masks); undefined for objects and arrays. */
  example?: string | number | boolean | null;
}

export interface PathLimits {
  /** Nesting below the root that is walked; deeper values are summarised by their type at the cap. */
  maxDepth: number;
  /** Distinct paths kept per body; the rest are counted in `truncated`. */
  maxPaths: number;
  /** Elements of one array walked (their paths fold into `path[]`); the rest are skipped. */
  maxArrayElements: number;
}

export interface BodyFields {
  fields: Map<string, FieldSighting>;
  /** Paths (with repeats) left out because `maxPaths` was reached. */
  truncated: number;
}

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
 * Child paths already worked out, by parent path, then key: bodies of one event type repeat the same keys, and
 * the two key tests and the concatenation were a sixth of learning an event. Bounded: past the cap, paths are
 * worked out again each time.
 */
const knownChildPaths = new Map<string, Map<string, string>>();
let knownChildPathCount = 0;
const MAX_KNOWN_CHILD_PATHS = 20_000;

function cachedChildPath(parent: string, key: string): string {
  let children = knownChildPaths.get(parent);
  const known = children?.get(key);
  if (known !== undefined) return known;
  const path = childPath(parent, key);
  if (knownChildPathCount < MAX_KNOWN_CHILD_PATHS) {
    if (!children) knownChildPaths.set(parent, (children = new Map()));
    children.set(key, path);
    knownChildPathCount += 1;
  }
  return path;
}

/**
 * Every field path of a parsed JSON body with its types. Array elements of any index share one path
 * (`items[]`), so an array of a thousand like objects costs as much as one. The walk is bounded by depth,
 * distinct paths and elements per array, whatever the body.
 */
export function extractFields(body: unknown, limits: PathLimits): BodyFields {
  const fields = new Map<string, FieldSighting>();
  let truncated = 0;
  const see = (path: string, value: unknown): boolean => {
    let sighting = fields.get(path);
    if (!sighting) {
      if (fields.size >= limits.maxPaths) {
        truncated += 1;
        return false;
      }
      sighting = { types: 0 };
      fields.set(path, sighting);
    }
    const type = jsonTypeOf(value);
    sighting.types |= JSON_TYPE_BIT[type];
    if (type !== 'object' && type !== 'array' && sighting.example === undefined) sighting.example = value as string | number | boolean | null;
    return true;
  };
  const walk = (value: unknown, path: string, depth: number): void => {
    if (depth >= limits.maxDepth || value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      const elementPath = `${path}[]`;
      const n = Math.min(value.length, limits.maxArrayElements);
      for (let i = 0; i < n; i += 1) if (see(elementPath, value[i])) walk(value[i], elementPath, depth + 1);
      return;
    }
    for (const key of Object.keys(value)) {
      const child = (value as Record<string, unknown>)[key];
      const path2 = cachedChildPath(path, key);
      if (see(path2, child)) walk(child, path2, depth + 1);
    }
  };
  walk(body, '', 0);
  return { fields, truncated };
}
