/**
 * Publish / subscribe (docs/scaling.md): `MemoryPubSub` by default, `RedisPubSub` across instances.
 */
export {
  MemoryPubSub, checkTopic, encodePayload, MAX_TOPIC_LENGTH, DEFAULT_MAX_QUEUED_EVENTS,
  type PubSub, type MemoryPubSubOptions,
} from './memory.js';
export { RedisPubSub, PubSubUnavailableError, DEFAULT_PUBSUB_PREFIX, type RedisPubSubOptions } from './redis.js';
