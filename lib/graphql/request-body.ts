/**
 * The request of a GraphQL route as graphql-http gets it: a JSON body parsed once under keel's rules
 * (nesting depth, prototype poisoning), and a GET's JSON query parameters under the same nesting rule.
 */
import { HttpError } from '../http/errors.js';
import { isJsonType, parseMediaType, refuseDeepJson } from '../http/content.js';
import { parseJsonText, type JsonPoisoning } from '../http/json-parse.js';

/**
 * A JSON body's value, parsed under keel's rules (nesting depth, then the prototype-poisoning check:
 * either refusal throws its 400 HttpError), or undefined when the media type is not JSON or the text
 * is malformed (graphql-http gives those its own answers). One parse serves the single request and
 * the batch (batch.ts).
 */
export function parsedJsonBody(text: string, contentType: string | undefined, poisoning: JsonPoisoning): { value: unknown } | undefined {
  if (!isJsonType(parseMediaType(contentType)?.type ?? '')) return undefined;
  refuseDeepJson(text);
  try {
    return { value: parseJsonText(text, poisoning) };
  } catch (err) {
    if (err instanceof HttpError) throw err;
    return undefined;
  }
}

/**
 * A JSON body, parsed here with the prototype-poisoning check (a refused key throws the 400
 * HttpError), so graphql-http gets the object and does not parse again. Other media types, malformed
 * JSON and non-objects stay text: graphql-http gives them its own answers.
 */
export function requestBody(text: string, contentType: string | undefined, poisoning: JsonPoisoning): string | Record<string, unknown> {
  const value = parsedJsonBody(text, contentType, poisoning)?.value;
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : text;
}

/** The JSON query parameters of a GraphQL GET (graphql-over-http: `variables`, `extensions`) under the JSON nesting rule. */
export function refuseDeepQuery(url: string | undefined): void {
  const q = url?.indexOf('?') ?? -1;
  if (q < 0) return;
  const params = new URLSearchParams(url!.slice(q + 1));
  for (const name of ['variables', 'extensions']) {
    const value = params.get(name);
    if (value) refuseDeepJson(value);
  }
}
