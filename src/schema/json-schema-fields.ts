import type { JsonType } from '../store/schema-store.js';
import { anyKeyPath, childPath } from './field-paths.js';

/** What a JSON Schema says of one field path. */
export interface ExpectedField {
  types: Set<JsonType>;
  /** Present whenever its parent is (listed in `required` of every branch that has it). */
  required: boolean;
}

type SchemaNode = Record<string, unknown>;

const MAX_DEPTH = 32;

function typesOfNode(node: SchemaNode): JsonType[] {
  const type = node.type;
  const names = Array.isArray(type) ? type : typeof type === 'string' ? [type] : [];
  const out = names.map((name) => (name === 'integer' ? 'number' : name)).filter((name): name is JsonType => ['string', 'number', 'boolean', 'null', 'object', 'array'].includes(name));
  if (out.length === 0 && 'const' in node) out.push(constType(node.const));
  if (out.length === 0 && Array.isArray(node.enum)) out.push(...node.enum.map(constType));
  if (out.length === 0 && (node.properties || node.additionalProperties)) out.push('object');
  if (out.length === 0 && node.items) out.push('array');
  return out;
}

function constType(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  const type = typeof value;
  return type === 'string' || type === 'number' || type === 'boolean' ? type : 'object';
}

function merge(into: Map<string, ExpectedField>, path: string, types: Iterable<JsonType>, required: boolean): void {
  const field = into.get(path);
  if (!field) into.set(path, { types: new Set(types), required });
  else {
    for (const type of types) field.types.add(type);
    field.required &&= required;
  }
}

/**
 * The field paths a JSON Schema describes (same path syntax as the observed schema), with their types and
 * whether they are required. Follows `properties`, `items`, `anyOf`/`oneOf`/`allOf` and local `$ref`s; a
 * union's field is required only if every branch requires it.
 */
export function expectedFields(root: SchemaNode): Map<string, ExpectedField> {
  const out = new Map<string, ExpectedField>();
  const resolve = (node: SchemaNode): SchemaNode => {
    const ref = node.$ref;
    if (typeof ref !== 'string' || !ref.startsWith('#/')) return node;
    let target: unknown = root;
    for (const part of ref.slice(2).split('/')) target = (target as SchemaNode | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    return (target as SchemaNode) ?? {};
  };
  const walk = (raw: SchemaNode, path: string, required: boolean, depth: number, into: Map<string, ExpectedField>): void => {
    if (depth > MAX_DEPTH) return;
    const node = resolve(raw);
    const branches = [...((node.anyOf as SchemaNode[]) ?? []), ...((node.oneOf as SchemaNode[]) ?? [])];
    if (branches.length > 0) {
      const maps = branches.map((branch) => {
        const map = new Map<string, ExpectedField>();
        walk(branch, path, required, depth + 1, map);
        return map;
      });
      const paths = new Set(maps.flatMap((map) => [...map.keys()]));
      for (const p of paths) {
        const inAll = maps.every((map) => map.get(p)?.required === true);
        for (const map of maps) {
          const field = map.get(p);
          if (field) merge(into, p, field.types, inAll);
        }
      }
    }
    for (const part of (node.allOf as SchemaNode[]) ?? []) walk(part, path, required, depth + 1, into);
    const types = typesOfNode(node);
    if (path !== '' && types.length > 0) merge(into, path, types, required);
    const properties = node.properties as Record<string, SchemaNode> | undefined;
    if (properties) {
      const requiredKeys = new Set(Array.isArray(node.required) ? (node.required as string[]) : []);
      for (const [key, child] of Object.entries(properties)) walk(child, childPath(path, key), requiredKeys.has(key), depth + 1, into);
    }
    const entries = node.additionalProperties as SchemaNode | boolean | undefined;
    if (entries && typeof entries === 'object' && Object.keys(entries).length > 0) walk(entries, anyKeyPath(path), false, depth + 1, into);
    const items = node.items as SchemaNode | undefined;
    if (items && typeof items === 'object') walk(items, `${path}[]`, false, depth + 1, into);
  };
  walk(root, '', true, 0, out);
  return out;
}
