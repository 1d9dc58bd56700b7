/**
 * Role / scope / permission checks against the verified claims that jwtAuth put on `req.auth`.
 *
 * Claim names (the common conventions of OAuth 2.0 servers and IdPs):
 * - roles: `roles` (array of strings, or one role as a string) and `role` (same forms);
 * - scopes: `scope`, a space-separated string (RFC 8693 §4.2, RFC 6749 §3.3), or `scp`, an array or a
 *   space-separated string (Azure AD, Okta); an array in `scope` is accepted too;
 * - permissions: `permissions` (array of strings, or one as a string; Auth0's RBAC claim).
 * Values that are not strings are ignored. Matching is exact and case-sensitive.
 */
import type { ServerResponse } from 'node:http';
import { UnauthorizedError } from '../../lib/http/errors.js';
import { problemFor } from '../../lib/http/problem.js';
import { rejecter, takeOnReject, type OnRejectOption } from '../../lib/http/reject.js';
import { AuthorizationConfig, fail } from '../../lib/records/index.js';
import type { KeelRequest, Middleware, NextFunction } from '../../lib/http/request.js';

/**
 * AuthorizationConfig input, snake_case or camelCase. The singular `required_role` is accepted and
 * fills `required_roles`.
 */
export type { AuthorizationConfigInput } from '../../lib/records/route.js';
import type { AuthorizationConfigInput as AuthorizationRecordInput } from '../../lib/records/route.js';
/** The AuthorizationConfig record (snake_case or camelCase) plus `onReject` (lib/http/reject.ts) and `challenge`. */
export type AuthorizationOptions = AuthorizationRecordInput &
  OnRejectOption & {
    /**
     * How a request without verified claims is refused. `true` (default, {@link DEFAULT_CHALLENGE}):
     * 401 with `WWW-Authenticate: Bearer`, for a token authenticator in front that lets such requests
     * through (express-jwt's `credentialsRequired: false`). `false`: 403, for routes where no
     * authenticator can produce claims, so there is no challenge a client could answer (RFC 9110
     * §15.5.2); createApp sets it on routes without JWT authentication.
     */
    challenge?: boolean;
  };

/** Default of {@link AuthorizationOptions.challenge}: a request without claims gets a 401 Bearer challenge. */
export const DEFAULT_CHALLENGE = true;

export { DEFAULT_ON_REJECT } from '../../lib/http/reject.js';

/** What the caller lacks, per kind; only non-empty kinds are present. */
export interface MissingGrants {
  roles?: string[];
  scopes?: string[];
  permissions?: string[];
}

/** Strings of a claim that may be an array or a single (optionally space-separated) string. */
function claimValues(value: unknown, spaceSeparated: boolean): string[] {
  if (typeof value === 'string') return spaceSeparated ? value.split(' ').filter(Boolean) : [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return [];
}

/** The caller's roles, scopes and permissions read from verified claims (see the module comment). */
export function grantsOf(claims: Readonly<Record<string, unknown>>): { roles: Set<string>; scopes: Set<string>; permissions: Set<string> } {
  return {
    roles: new Set([...claimValues(claims.roles, false), ...claimValues(claims.role, false)]),
    scopes: new Set([...claimValues(claims.scope, true), ...claimValues(claims.scp, true)]),
    permissions: new Set(claimValues(claims.permissions, false)),
  };
}

const KINDS = ['roles', 'scopes', 'permissions'] as const;
const BEARER_CHALLENGE = Object.freeze({ 'WWW-Authenticate': 'Bearer' });

/** RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ). */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/**
 * The 403's detail, in the reference implementation's words; what is lacking is in the `missing`
 * extension member (RFC 9457 §3.2), where a client can read it without parsing prose.
 */
export const AUTHORIZATION_FORBIDDEN_DETAIL = 'Insufficient permissions to access this resource';

/**
 * Enforce an AuthorizationConfig (`required_roles`, `required_scopes`, `required_permissions`,
 * `require_all`) against `req.auth`, which jwtAuth sets. Place it after jwtAuth.
 *
 * - no `req.auth` (the request is not authenticated with a token): 401 with `WWW-Authenticate: Bearer`,
 *   or, with `challenge: false`, a 403 problem (title "Forbidden", the detail below, no `missing`: it
 *   would only restate the configuration to every caller);
 * - requirements not met: 403 problem (title "Forbidden", detail "Insufficient permissions to access
 *   this resource", as the reference words it) whose extension member
 *   `missing: { roles?, scopes?, permissions? }` holds what is lacking (all listed requirements when
 *   `require_all` is false and none matched). When scopes are lacking the response also carries
 *   `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"` (RFC 6750 §3.1).
 * With nothing listed, it only requires `req.auth` to be present.
 *
 * Claims read: `roles`/`role`, `scope` (space-separated, RFC 8693 §4.2) / `scp`, `permissions`.
 *
 * @example
 * import express from 'express';
 * import { jwtAuth } from 'keel/middleware/jwt-auth';
 * import { authorization } from 'keel/middleware/authorization';
 *
 * const app = express();
 * app.delete('/users/:id',
 *   jwtAuth({ secret: process.env.JWT_SECRET! }),
 *   authorization({ required_roles: ['admin'], required_scopes: ['users:write'] }),
 *   (_req, res) => res.status(204).end());
 *
 * With `onReject: 'next'` the 401 goes to `next(err)` as an express-jwt-shaped UnauthorizedError
 * (`code: 'credentials_required'`) and the 403 as an HttpError with `extensions.missing` and the
 * `WWW-Authenticate` challenge (when scopes are lacking) in `headers`.
 */
export function authorization(options: AuthorizationOptions = {}): Middleware {
  const { onReject, rest: withChallenge } = takeOnReject(options, 'AuthorizationConfig');
  const { challenge = DEFAULT_CHALLENGE, ...rest } = withChallenge as AuthorizationOptions;
  if (typeof challenge !== 'boolean') fail('AuthorizationConfig', 'AuthorizationConfig', 'challenge', challenge, 'true or false');
  const reject = rejecter(onReject);
  const config = AuthorizationConfig.parse(rest, 'AuthorizationConfig');
  config.required_scopes.forEach((scope, i) => {
    // RFC 6749 §3.3 scope-token; anything else (a space, a quote) could never match a granted scope.
    if (!SCOPE_TOKEN.test(scope)) fail('AuthorizationConfig', 'AuthorizationConfig', `required_scopes[${i}]`, scope, 'a scope token (RFC 6749 §3.3: no spaces, quotes or backslashes)');
  });
  const required = { roles: [...config.required_roles], scopes: [...config.required_scopes], permissions: [...config.required_permissions] };
  const requireAll = config.require_all;
  const nothingRequired = KINDS.every((k) => required[k].length === 0);
  const unauthenticated = Object.freeze(problemFor('KEEL_UNAUTHORIZED', 'Authentication required: this resource needs a verified token'));
  const listed: MissingGrants = Object.fromEntries(KINDS.filter((k) => required[k].length).map((k) => [k, required[k]]));
  const forbidden = (report: MissingGrants) => problemFor('KEEL_FORBIDDEN', AUTHORIZATION_FORBIDDEN_DETAIL, { missing: report });
  const closed = Object.freeze(problemFor('KEEL_FORBIDDEN', AUTHORIZATION_FORBIDDEN_DETAIL));

  return function authorizationMiddleware(req: KeelRequest, res: ServerResponse, next: NextFunction): void {
    const claims = req.auth;
    if (claims === undefined || claims === null || typeof claims !== 'object') {
      // No authenticator can answer a challenge here: nobody holds the grants (spec: the 403 belongs to
      // the authorization requirement). `missing` would only restate the configuration to every caller.
      if (!challenge) return reject.refuse(req, res, next, closed);
      // express-jwt with credentialsRequired: false lets such a request through; its error is this one.
      return reject.refuse(req, res, next, unauthenticated, BEARER_CHALLENGE, (p, h) => new UnauthorizedError('credentials_required', p.detail!, { headers: { ...h } }));
    }
    if (nothingRequired) return next();
    const held = grantsOf(claims);
    const missing: MissingGrants = {};
    let anyHeld = false;
    for (const kind of KINDS) {
      const lacking = required[kind].filter((v) => !held[kind].has(v));
      if (lacking.length < required[kind].length) anyHeld = true;
      if (lacking.length) missing[kind] = lacking;
    }
    const allowed = requireAll ? Object.keys(missing).length === 0 : anyHeld;
    if (allowed) return next();
    // With require_all false nothing matched, so every listed requirement is reported.
    const report: MissingGrants = requireAll ? missing : listed;
    const headers: Record<string, string> = {};
    if (report.scopes) headers['WWW-Authenticate'] = `Bearer error="insufficient_scope", scope="${required.scopes.join(' ')}"`;
    reject.refuse(req, res, next, forbidden(report), headers);
  };
}
