/**
 * The conformance case format (see the corpus README): a route definition, a request and the
 * response a conforming server must give. Fields are typed as loosely as the corpus is written;
 * the loader only insists on what the runner needs.
 */

export interface HandlerParameterSpec {
  type?: string;
  required?: boolean;
  optional?: boolean;
  separator?: string;
  [schemaKeyword: string]: unknown;
}

export interface CaseHandler {
  route: string;
  method: string;
  parameters?: Partial<Record<'path' | 'query' | 'headers' | 'cookies' | 'files', Record<string, HandlerParameterSpec>>>;
  body_schema?: Record<string, unknown>;
  content_type?: string;
  middleware?: Record<string, unknown>;
  cors?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface CaseFile {
  field_name: string;
  filename?: string | null;
  content?: string;
  /** `text` (default) or `base64`. */
  content_encoding?: string;
  content_type?: string | null;
  /** Hex bytes, used instead of `content` by a few cases. */
  magic_bytes?: string;
  headers?: Record<string, string>;
}

export interface CaseRequest {
  method: string;
  path: string;
  query_params?: Record<string, unknown>;
  query_string?: string;
  headers?: Record<string, string>;
  cookies?: Record<string, string>;
  body?: unknown;
  form_data?: Record<string, unknown>;
  data?: Record<string, unknown>;
  files?: CaseFile[];
  content_type?: string;
  [key: string]: unknown;
}

export interface CaseExpectedResponse {
  status_code: number;
  body?: unknown;
  headers?: Record<string, string>;
  cookies?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface ConformanceCase {
  /** Stable id: `<category>/<file stem>` or `<category>/<id>` (array files). */
  id: string;
  category: string;
  name: string;
  description?: string;
  /** File the case came from (plus `#<index>` for array files). */
  source: string;
  /** Why the runner does not send this case (other protocol, `skip` for node); undefined = runnable. */
  skip?: string;
  handler: CaseHandler;
  request: CaseRequest;
  expected: CaseExpectedResponse;
  /** Extra blocks a few cases carry (`streaming`, `background`). */
  extra: Record<string, unknown>;
}

/** A case the runner does not send, with the reason (other protocols, whole documents, `skip`). */
export interface SkippedCase {
  id: string;
  category: string;
  source: string;
  skip: string;
}

export type LoadedCase = ConformanceCase | SkippedCase;

export function isRunnable(c: LoadedCase): c is ConformanceCase & { skip: undefined } {
  return (c as ConformanceCase).handler !== undefined && c.skip === undefined;
}
