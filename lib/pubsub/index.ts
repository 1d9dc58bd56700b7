/**
 * Publish / subscribe (docs/scaling.md): `MemoryPubSub` by default, `RedisPubSub` across instances.
 */
export {
  MemoryPubSub, pubsubIterator, checkTopic, encodePayload, MAX_TOPIC_LENGTH, DEFAULT_ITERATOR_BUFFER,
  type PubSub, type PubSubListener, type Unsubscribe,
} from './memory.js';
export { RedisPubSub, PubSubUnavailableError, DEFAULT_PUBSUB_PREFIX, type RedisPubSubOptions } from './redis.js';
