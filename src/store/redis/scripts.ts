/**
 * The Lua scripts of the Redis store: each runs atomically on the server, so a compare-and-swap
 * or a lock grant is one step whatever the number of replicas. Keys: an entry is a hash
 * (`n` version, `v` JSON); one counter gives every write its version; a lock is a plain key
 * holding its holder's fencing token, set with `NX PX`, the token from a counter per lock name.
 */

/**
 * KEYS: entry, version counter, fence counter of the writer's lock (any key when unfenced).
 * ARGV: json, ifVersion ('' = any), ttlMs ('' = none), fence token ('' = unfenced).
 * {1, version} written; {0, version, json} a compare-and-swap miss; {2, newest} fenced out.
 */
export const SET_SCRIPT = `
if ARGV[4] ~= '' then
  local newest = tonumber(redis.call('GET', KEYS[3])) or 0
  if newest > tonumber(ARGV[4]) then return {2, tostring(newest)} end
end
local current = redis.call('HMGET', KEYS[1], 'n', 'v')
if ARGV[2] ~= '' and (tonumber(current[1]) or 0) ~= tonumber(ARGV[2]) then
  return {0, current[1] or '', current[2] or ''}
end
local version = redis.call('INCR', KEYS[2])
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'n', version, 'v', ARGV[1])
if ARGV[3] ~= '' then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return {1, tostring(version)}
`;

/** KEYS: entry. ARGV: ifVersion ('' = any). */
export const DELETE_SCRIPT = `
local version = redis.call('HGET', KEYS[1], 'n')
if not version then return 0 end
if ARGV[1] ~= '' and tonumber(version) ~= tonumber(ARGV[1]) then return 0 end
redis.call('DEL', KEYS[1])
return 1
`;

/** KEYS: lock, fence counter. ARGV: leaseMs. The new token, or 0 while someone holds the lock. */
export const LOCK_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local token = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], token, 'NX', 'PX', ARGV[1])
return token
`;

/** KEYS: lock. ARGV: token, leaseMs. 1 when the lease was still this holder's and is extended. */
export const RENEW_SCRIPT = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

/** KEYS: lock. ARGV: token. Frees the lock only for its holder. */
export const RELEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`;
