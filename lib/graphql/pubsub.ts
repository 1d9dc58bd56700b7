/**
 * Publish / subscribe for GraphQL subscriptions: the interface and the in-process `MemoryPubSub` live in
 * the core (lib/pubsub/memory.ts, also used by WebSocket broadcasts and `RedisPubSub`); re-exported here.
 */
export { MemoryPubSub, DEFAULT_MAX_QUEUED_EVENTS, type PubSub, type MemoryPubSubOptions } from '../pubsub/memory.js';
