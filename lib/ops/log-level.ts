/**
 * KEEL_LOG_LEVEL, read once when an App makes its default logger. pino throws an unhelpful
 * "default level:verbose must be included in custom levels" for a name it does not know; keel
 * refuses it first, saying which levels exist.
 */
import cluster from 'node:cluster';
import { pino } from 'pino';
import { ConfigError } from '../http/errors.js';
import { show, suggest } from '../records/define.js';

/** The levels pino knows (fatal … trace) plus `silent`, most to least severe. */
export const LOG_LEVELS: readonly string[] = Object.freeze([
  ...Object.entries(pino.levels.values).sort(([, a], [, b]) => b - a).map(([name]) => name),
  'silent',
]);

/** The default level when KEEL_LOG_LEVEL is unset: `info`, or DEFAULT_TEST_LOG_LEVEL under NODE_ENV=test. */
export const DEFAULT_LOG_LEVEL = 'info';
/**
 * The default level under NODE_ENV=test: `error`. A test run stays quiet (no request or warn lines), but what is
 * wrong still shows: a 500's cause, a response that breaks its schema (docs/routes.md), a failed store.
 */
export const DEFAULT_TEST_LOG_LEVEL = 'error';

/**
 * The log level KEEL_LOG_LEVEL names (default DEFAULT_LOG_LEVEL, DEFAULT_TEST_LOG_LEVEL under NODE_ENV=test); an
 * unknown name is a ConfigError listing the valid ones.
 */
export function logLevelFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  const given = env.KEEL_LOG_LEVEL;
  if (given === undefined || given === '') return env.NODE_ENV === 'test' ? DEFAULT_TEST_LOG_LEVEL : DEFAULT_LOG_LEVEL;
  if (LOG_LEVELS.includes(given)) return given;
  const meant = suggest(given, LOG_LEVELS);
  throw new ConfigError(
    `KEEL_LOG_LEVEL=${show(given)} is not a log level: use one of ${LOG_LEVELS.join(', ')}${meant ? ` (did you mean "${meant}"?)` : ''}, or unset it for ${DEFAULT_LOG_LEVEL}.`,
    { record: 'environment', path: 'KEEL_LOG_LEVEL', key: 'KEEL_LOG_LEVEL', value: given },
  );
}

/**
 * The fields on every line of keel's own default loggers: `name`, `pid` and, in a worker of a
 * `workers > 1` server, `worker` (the node:cluster worker id), so the lines of processes sharing one
 * output can be told apart.
 */
export function logBase(name: string): Record<string, unknown> {
  return { name, pid: process.pid, ...(cluster.isWorker && cluster.worker ? { worker: cluster.worker.id } : {}) };
}
