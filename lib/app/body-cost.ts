/**
 * A route's body parsing (JSON, form, multipart) paid from the client's CPU budget (lib/server/cost.ts), as the
 * protocols' expensive work is: 20,000 tiny multipart parts at 10 requests/s from one address, each request under
 * every limit, held a CPU for 21 s (issue 44). A client already in debt is refused (429 + Retry-After) before its
 * next body is parsed; what a parse takes is charged once it is done.
 */
import type { KeelRequest } from '../http/request.js';
import type { AppWorkGate } from '../server/cost.js';
import { isThenable } from './handler.js';

/**
 * Bodies smaller than this are parsed without being measured or charged: 16 KiB of JSON parses in tens of
 * microseconds, less than the client key and the clock reads would cost on every small request.
 */
export const BODY_COST_MIN_BYTES = 16 * 1024;

export type ChargedParse = <T>(req: KeelRequest, bytes: number, parse: () => T | Promise<T>) => T | Promise<T>;

/** `parse()` for a body of `bytes`, refused while the client is in debt and charged its measured time. */
export function chargedBodyParse(g: AppWorkGate): ChargedParse {
  return function chargedParse<T>(req: KeelRequest, bytes: number, parse: () => T | Promise<T>): T | Promise<T> {
    if (bytes < BODY_COST_MIN_BYTES) return parse();
    const key = g.keyOf(req);
    // Only a client with nothing left is asked to admit(): the refusal (429 cpu-budget-exceeded) is the gate's own.
    if (g.gate.remainingMs(key) <= 0) g.gate.admit(key);
    const t0 = performance.now();
    let result: T | Promise<T>;
    try {
      result = parse();
    } catch (err) {
      g.gate.charge(key, performance.now() - t0);
      throw err;
    }
    if (!isThenable(result)) {
      g.gate.charge(key, performance.now() - t0);
      return result;
    }
    // Multipart: busboy runs inside parse() for the whole buffered body; what follows is its file streams' ends.
    const cpu0 = process.cpuUsage();
    const sync = performance.now() - t0;
    return Promise.resolve(result).finally(() => {
      const cpu = process.cpuUsage(cpu0);
      g.gate.charge(key, sync + Math.min(performance.now() - t0 - sync, (cpu.user + cpu.system) / 1000));
    });
  };
}
