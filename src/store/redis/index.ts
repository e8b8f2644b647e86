/** `mcp-supervisor/redis`: the store for replicas on many machines (needs the `redis` package). */
export { redisStore, type RedisStoreOptions, type RedisClientLike } from './redis-store.js';
