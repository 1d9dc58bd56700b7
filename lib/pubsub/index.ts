/**
 * Publish / subscribe (docs/scaling.md): `MemoryPubSub` by default, `RedisPubSub` across instances.
 */
export {
  MemoryPubSub, checkTopic, encodePayload, MAX_TOPIC_LENGTH, DEFAULT_MAX_QUEUED_EVENTS,
  type PubSub, type MemoryPubSubOptions,
} from './memory.js';
export { RedisPubSub, PubSubUnavailableError, DEFAULT_PUBSUB_PREFIX, PUBLISH_TIMEOUT_MS, type RedisPubSubOptions } from './redis.js';
export { PUBLISH_DEADLINE_MARGIN_MS, RESUBSCRIBE_WAIT_MS, MAX_TRACKED_TOPICS } from './redis-publish.js';
