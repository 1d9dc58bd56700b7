/**
 * A pino logger writing to memory, for tests that assert on log records.
 * `next()` resolves with the next record written (that passes `filter`), in order.
 */
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

export type LogRecord = Record<string, unknown>;

export function captureLogs(filter: (rec: LogRecord) => boolean = () => true): { logger: Logger; next: () => Promise<LogRecord> } {
  const records: LogRecord[] = [];
  const waiting: ((r: LogRecord) => void)[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      const rec = JSON.parse(chunk.toString()) as LogRecord;
      if (filter(rec)) {
        const w = waiting.shift();
        if (w) w(rec);
        else records.push(rec);
      }
      cb();
    },
  });
  return {
    logger: pino({ level: 'info' }, stream),
    next: () => new Promise<LogRecord>((resolve) => (records.length ? resolve(records.shift()!) : waiting.push(resolve))),
  };
}
