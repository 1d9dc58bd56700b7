/**
 * Route patterns: the spec's `{name}` / `{name:type}` placeholders and Express's `:name`, compiled
 * to find-my-way's radix-tree syntax.
 */
import { AppError } from '../http/errors.js';

/** Placeholder types and the JSON Schema they imply for the parameter. */
export const PATH_PARAM_TYPES: Readonly<Record<string, Record<string, unknown>>> = Object.freeze({
  int: { type: 'integer' },
  integer: { type: 'integer' },
  float: { type: 'number' },
  number: { type: 'number' },
  str: { type: 'string' },
  string: { type: 'string' },
  bool: { type: 'boolean' },
  boolean: { type: 'boolean' },
  uuid: { type: 'string', format: 'uuid' },
  date: { type: 'string', format: 'date' },
  datetime: { type: 'string', format: 'date-time' },
  path: { type: 'string' },
});

export interface CompiledPattern {
  /** find-my-way pattern, e.g. `/users/:id` or `/files/*`. */
  pattern: string;
  /** Parameter names in order. */
  names: string[];
  /** Schemas implied by `{name:type}` placeholders. */
  typed: Record<string, Record<string, unknown>>;
  /** Name of the catch-all parameter (`{rest:path}`), which find-my-way calls `*`. */
  wildcard: string | null;
}

/**
 * Compile `/users/{id:int}/files/{rest:path}` (or `/users/:id`). A typed placeholder
 * contributes a schema, so `/users/abc` on `{id:int}` is a 422 naming the parameter, not a 404.
 */
export function compilePattern(path: string): CompiledPattern {
  if (typeof path !== 'string' || !path.startsWith('/')) {
    throw new AppError('Route', `Route path must be a string starting with "/", got ${JSON.stringify(path)}`);
  }
  const names: string[] = [];
  const typed: Record<string, Record<string, unknown>> = {};
  let wildcard: string | null = null;
  const segments = path.split('/').map((seg, i, all) => {
    const m = /^\{([A-Za-z_][A-Za-z0-9_]*)(?::([A-Za-z]+))?\}$/.exec(seg);
    if (m) {
      const [, name, type] = m as unknown as [string, string, string | undefined];
      if (names.includes(name)) throw new AppError('Route', `Route ${path} declares parameter "${name}" twice`);
      names.push(name);
      if (type) {
        const schema = PATH_PARAM_TYPES[type];
        if (!schema) throw new AppError('Route', `Route ${path}: unknown parameter type "${type}" in {${name}:${type}}. Known: ${Object.keys(PATH_PARAM_TYPES).join(', ')}`);
        typed[name] = { ...schema };
        if (type === 'path') {
          if (i !== all.length - 1) throw new AppError('Route', `Route ${path}: {${name}:path} must be the last segment`);
          wildcard = name;
          return '*';
        }
      }
      return `:${name}`;
    }
    if (seg.includes('{') || seg.includes('}')) throw new AppError('Route', `Route ${path}: malformed placeholder in segment "${seg}"`);
    const express = /^:([A-Za-z_][A-Za-z0-9_]*)$/.exec(seg);
    if (express) names.push(express[1]!);
    if (seg === '*') wildcard = '*';
    return seg;
  });
  return { pattern: segments.join('/'), names, typed, wildcard };
}

/** `/users/:id` or `/users/{id:int}` → `/users/{id}` (OpenAPI form). */
export function openApiPath(path: string): string {
  return path
    .split('/')
    .map((seg) => seg.replace(/^\{([A-Za-z_][A-Za-z0-9_]*)(?::[A-Za-z]+)?\}$/, '{$1}').replace(/^:([A-Za-z_][A-Za-z0-9_]*)$/, '{$1}'))
    .join('/');
}
