/**
 * Type tests: configuration records. Good configs compile; unknown keys, typos and wrong value types
 * are compile errors (each `@ts-expect-error` must stay an error).
 */
import { App, createApp, type ServerConfigInput, type CompressionConfigInput, type JwtConfigInput, type StaticFilesConfigInput } from '../../lib/index.js';
import { compression } from '../../middleware/compression/index.js';
import { rateLimit } from '../../middleware/rate-limit/index.js';
import { jwtAuth } from '../../middleware/jwt-auth/index.js';
import { cors } from '../../middleware/cors/index.js';
import { authorization } from '../../middleware/authorization/index.js';
import { staticFiles } from '../../middleware/static-files/index.js';
import { apiKeyAuth } from '../../middleware/api-key-auth/index.js';
import { bodyLimit } from '../../middleware/body-limit/index.js';
import { timeout } from '../../middleware/timeout/index.js';
import { requestId } from '../../middleware/request-id/index.js';
import { expectType, type Equal } from './expect.js';

const secret = 'a-secret-of-at-least-32-bytes-for-HS256!';

// ---------------------------------------------------------------- good configs compile
createApp();
createApp({});
createApp({ port: 8000, host: '0.0.0.0', enable_request_id: true, compression: {}, max_body_size: null });
createApp({ enableRequestId: true, maxBodySize: 1024, requestTimeout: 30, shutdownTimeout: 5 });
createApp({ jwt_auth: { secret, algorithm: 'HS384', audience: ['api'], issuer: null, leeway: 5 } });
createApp({ rate_limit: { per_second: 10, burst: 20, ipBased: false }, api_key_auth: { keys: ['k1'], header_name: 'X-Key' } });
createApp({ static_files: [{ directory: 'public', route_prefix: '/static' }, { directory: 'docs', routePrefix: '/docs', cacheControl: 'no-cache' }] });
createApp({ openapi: { enabled: true, title: 'T', security_schemes: { bearer: { type: 'http', scheme: 'bearer', bearer_format: 'JWT' } } } });
createApp({ background_tasks: { enabled: true, max_queue_size: 10 }, grpc: {}, jsonrpc: { endpoint_path: '/rpc' } });
createApp({ cors: { allowed_origins: ['https://a.example'], allowCredentials: true, max_age: 600 } });
new App({ port: 0, workers: 2 });
new App(new App().config); // a parsed ServerConfig is accepted as is

// ---------------------------------------------------------------- the examples fail
// @ts-expect-error a number is not a ServerConfig
createApp(42);
// @ts-expect-error port is an integer
createApp({ port: 'abc' });
// @ts-expect-error unknown key (tsc: "Did you mean to write 'compression'?")
createApp({ compresion: {} });
// @ts-expect-error both at once
createApp({ port: 'abc', compresion: {} });
// @ts-expect-error new App takes the same type
new App({ prot: 8000 });

// ---------------------------------------------------------------- typos and wrong types in nested records
// @ts-expect-error an enum value outside the algorithm list (tsc: "Did you mean '"HS256"'?")
createApp({ jwt_auth: { secret, algorithm: 'HS257' } });
// @ts-expect-error audience is a list of strings
createApp({ jwt_auth: { secret, audience: 'api' } });
// @ts-expect-error a JwtConfig without its key (secret or public_key) can verify nothing
createApp({ jwt_auth: { algorithm: 'HS256' } });
// @ts-expect-error the same through new App
new App({ jwt_auth: { issuer: 'https://issuer.example' } });
// a key from the environment (string | undefined) compiles, and is checked at start-up
createApp({ jwt_auth: { secret: process.env.JWT_SECRET } });
createApp({ jwt_auth: { publicKey: process.env.JWT_PUBLIC_KEY, algorithm: 'RS256' } });
// @ts-expect-error ApiKeyConfig.keys is required
createApp({ api_key_auth: { header_name: 'X-Key' } });
// @ts-expect-error StaticFilesConfig.route_prefix is required (in either spelling)
createApp({ static_files: [{ directory: 'public' }] });
// @ts-expect-error not both spellings of a required key
createApp({ static_files: [{ directory: 'public', route_prefix: '/s', routePrefix: '/s' }] });
// @ts-expect-error the server-level CorsConfig is typed like a route's (tsc: "Did you mean to write 'allowed_origins'?")
createApp({ cors: { allowed_origin: ['https://a.example'] } });
// @ts-expect-error the same typo through new App
new App({ cors: { allowedOrigin: ['https://a.example'] } });
// @ts-expect-error gzip is a boolean
createApp({ compression: { gzip: 'yes' } });
// @ts-expect-error a tagged security scheme needs its variant's keys
createApp({ openapi: { security_schemes: { bearer: { type: 'http', scheme: 'bearer' } } } });
// @ts-expect-error null only where the record says nullable
createApp({ port: null });

// ---------------------------------------------------------------- the generated types are what the records say
expectType<Equal<CompressionConfigInput, { gzip?: boolean; brotli?: boolean; min_size?: number; minSize?: number; quality?: number; enabled?: boolean }>>(true);
expectType<Equal<NonNullable<JwtConfigInput['algorithm']>, 'HS256' | 'HS384' | 'HS512' | 'RS256' | 'RS384' | 'RS512' | 'PS256' | 'PS384' | 'PS512' | 'ES256' | 'ES384' | 'ES512' | 'EdDSA'>>(true);
expectType<Equal<ServerConfigInput['max_body_size'], number | null | undefined>>(true);
expectType<Equal<ServerConfigInput['maxBodySize'], number | null | undefined>>(true);
expectType<Equal<ServerConfigInput['max_uri_length'], number | null | undefined>>(true);
const sf: StaticFilesConfigInput = { directory: 'd', routePrefix: '/p' };
void sf;

// ---------------------------------------------------------------- middleware factories take the same record inputs
compression({ min_size: 0, quality: 11 });
rateLimit({ perSecond: 5 });
jwtAuth({ secret, algorithm: 'HS256' });
jwtAuth({ enabled: false });
cors({ allowed_origins: ['https://example.com'], maxAge: 600 });
authorization({ required_role: 'admin', require_all: false });
staticFiles({ directory: 'public', route_prefix: '/static' });
apiKeyAuth({ keys: ['k'], allow_query: true });
// @ts-expect-error typo in a factory option
compression({ min_sise: 0 });
// @ts-expect-error wrong type
rateLimit({ burst: '10' });
// @ts-expect-error unknown algorithm
jwtAuth({ secret, algorithm: 'none' });
// @ts-expect-error jwtAuth without its key
jwtAuth({ algorithm: 'HS256' });
// @ts-expect-error typo
cors({ allowed_origin: ['*'] });
bodyLimit({ maxBodySize: null });
bodyLimit({ max_body_size: 1024 });
timeout({ request_timeout: 5 });
timeout({ requestTimeout: null });
requestId({ enabled: true, headerName: 'X-Correlation-ID' });
// @ts-expect-error timeout needs request_timeout (null for none)
timeout({});
// @ts-expect-error a size is a number
bodyLimit({ max_body_size: '10mb' });
// @ts-expect-error typo
requestId({ header: 'X-Id' });
