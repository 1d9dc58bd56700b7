/**
 * The CorsConfig record (spec: CorsConfig), per route and as ServerConfig.cors, the default of every
 * route. Its own module so server.ts and route.ts can both use it without an import cycle.
 */
import { defineRecord, t, type InputOf, type RecordDef } from './define.js';

export interface CorsConfigData {
  allowed_origins: readonly string[];
  allowed_methods: readonly string[];
  allowed_headers: readonly string[];
  expose_headers: readonly string[] | null;
  /** Seconds (Access-Control-Max-Age is in seconds, Fetch standard). */
  max_age: number | null;
  allow_credentials: boolean | null;
}

const CorsRecord = defineRecord<CorsConfigData>()('CorsConfig', {
  allowed_origins: { type: t.list(t.string({ minLength: 1 })), default: () => ['*'] },
  allowed_methods: { type: t.list(t.string({ minLength: 1 })), default: () => ['*'] },
  allowed_headers: { type: t.list(t.string({ minLength: 1 })), default: () => [] },
  expose_headers: { type: t.list(t.string({ minLength: 1 })), nullable: true },
  max_age: { type: t.integer(0, 2 ** 31 - 1), nullable: true, doc: 'Preflight cache lifetime, seconds' },
  allow_credentials: { type: t.boolean(), nullable: true },
});

/** A parsed CorsConfig: the record's data plus its operations (joined strings computed once). */
export class CorsConfig implements CorsConfigData {
  readonly allowed_origins!: readonly string[];
  readonly allowed_methods!: readonly string[];
  readonly allowed_headers!: readonly string[];
  readonly expose_headers!: readonly string[] | null;
  readonly max_age!: number | null;
  readonly allow_credentials!: boolean | null;
  // The spec's methods_joined_cache / headers_joined_cache: not part of the wire form.
  readonly #methodsJoined: string;
  readonly #headersJoined: string;
  readonly #anyOrigin: boolean;
  readonly #anyMethod: boolean;

  private constructor(data: Readonly<CorsConfigData>) {
    Object.assign(this, data);
    this.#methodsJoined = data.allowed_methods.join(', ');
    this.#headersJoined = data.allowed_headers.join(', ');
    this.#anyOrigin = data.allowed_origins.includes('*');
    this.#anyMethod = data.allowed_methods.includes('*');
    Object.freeze(this);
  }

  static readonly record: RecordDef<CorsConfigData, CorsConfigInput> = CorsRecord;

  /** Parse snake_case or camelCase input; defaults as in the spec. */
  static parse(input: unknown, path = 'CorsConfig'): CorsConfig {
    return input instanceof CorsConfig ? input : new CorsConfig(CorsRecord.parse(input, path));
  }

  static defaults(): CorsConfig {
    return CorsConfig.parse({});
  }

  static jsonSchema(): Record<string, unknown> {
    return CorsRecord.jsonSchema();
  }

  /** Methods joined with ", " for Access-Control-Allow-Methods. */
  allowedMethodsJoined(): string {
    return this.#methodsJoined;
  }

  /** Headers joined with ", " for Access-Control-Allow-Headers. */
  allowedHeadersJoined(): string {
    return this.#headersJoined;
  }

  /** True for any origin when the list holds `*`; otherwise only on an exact match. */
  isOriginAllowed(origin: string): boolean {
    return this.#anyOrigin || this.allowed_origins.includes(origin);
  }

  /** True for any method when the list holds `*`; otherwise only on an exact match. */
  isMethodAllowed(method: string): boolean {
    return this.#anyMethod || this.allowed_methods.includes(method);
  }

  toJSON(): CorsConfigData {
    const { allowed_origins, allowed_methods, allowed_headers, expose_headers, max_age, allow_credentials } = this;
    return { allowed_origins, allowed_methods, allowed_headers, expose_headers, max_age, allow_credentials };
  }
}

/** What `CorsConfig.parse` accepts: the record's keys in snake_case or camelCase. */
export type CorsConfigInput = InputOf<typeof CorsRecord>;
