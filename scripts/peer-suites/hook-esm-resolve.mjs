// Resolve hook: a resolved file listed in KEEL_PEER_REDIRECT is replaced by its adapter.
import { fileURLToPath, pathToFileURL } from 'node:url';
const redirect = JSON.parse(process.env.KEEL_PEER_REDIRECT || '{}');
const bypass = new Set(JSON.parse(process.env.KEEL_PEER_BYPASS || '[]'));
const express = process.env.KEEL_PEER_EXPRESS || '';
export async function resolve(specifier, context, next) {
  if (express && specifier === 'express') return next(express, context);
  const found = await next(specifier, context);
  if (!found.url.startsWith('file:')) return found;
  const to = redirect[fileURLToPath(found.url)];
  if (to === undefined || (context.parentURL && bypass.has(fileURLToPath(context.parentURL)))) return found;
  // A `?query` picks one export of a shared adapter (helmet's per-middleware modules).
  const [file, query] = to.split('?');
  return { ...found, url: pathToFileURL(file).href + (query ? `?${query}` : ''), format: file.endsWith('.cjs') ? 'commonjs' : 'module', shortCircuit: true };
}
