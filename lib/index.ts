export * from './records/index.js';
export * from './errors.js';
export * from './problem.js';
export type { KeelRequest, KeelRequestExtensions, Middleware, NextFunction } from './request.js';
