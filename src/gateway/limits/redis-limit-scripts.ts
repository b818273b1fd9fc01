// The Lua scripts behind RedisLimitStore. Each runs atomically in Redis (no other command of any
// replica interleaves) and reads time from Redis's own TIME, so every replica checks and records
// against one state and one clock: N replicas together admit exactly the configured limit.
//
// Layout per counter (all keys of one call share a {hash tag}, so they live in one cluster slot):
//   window: sorted set, member `<id>|<cost>`, score = time recorded (ms); `<key>:sum` = total cost.
//   lease:  sorted set, member `<id>`, score = expiry (ms). Expired members are dropped before counting.
// Scripts need Redis ≥ 5 (TIME inside a script relies on effects replication, the default since 5).

const PRELUDE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function costOf(member) return tonumber(string.match(member, '|(%d+)$')) end
local function sumOf(members)
  local s = 0
  for _, m in ipairs(members) do s = s + costOf(m) end
  return s
end
`;

/**
 * KEYS[2i-1], KEYS[2i]: check i's sorted set and its running total (unused by a lease).
 * ARGV[1]: holder id; then per check: kind ('window' | 'lease'), limit, ms (window length | lease time), cost.
 * Returns {1} when every check passed and all were recorded, else {0, i, wait, used, …} per refusing
 * check: wait in ms, -1 unknown (a lease frees when its holder ends), -2 never (cost above the limit).
 */
export const ACQUIRE_SCRIPT = `${PRELUDE}
local id = ARGV[1]
local n = #KEYS / 2

-- Cost inside the window after dropping what left it. The total is kept beside the set so a
-- check costs O(entries that expired), not O(window); it is rebuilt if it was ever lost.
local function windowUsed(key, sumKey, ms)
  local cutoff = now - ms
  local expired = redis.call('ZRANGEBYSCORE', key, '-inf', cutoff)
  if #expired > 0 then redis.call('ZREMRANGEBYSCORE', key, '-inf', cutoff) end
  if redis.call('ZCARD', key) == 0 then
    redis.call('DEL', sumKey)
    return 0
  end
  local total = redis.call('GET', sumKey)
  if total then
    local gone = sumOf(expired)
    if gone > 0 then redis.call('DECRBY', sumKey, gone) end
    return tonumber(total) - gone
  end
  local used = sumOf(redis.call('ZRANGE', key, 0, -1))
  local ttl = redis.call('PTTL', key)
  redis.call('SET', sumKey, used, 'PX', ttl > 0 and ttl or ms)
  return used
end

local refused = {0}
for i = 1, n do
  local base = 1 + (i - 1) * 4
  local kind, limit, ms, cost = ARGV[base + 1], tonumber(ARGV[base + 2]), tonumber(ARGV[base + 3]), tonumber(ARGV[base + 4])
  local key, sumKey = KEYS[2 * i - 1], KEYS[2 * i]
  if kind == 'window' then
    local used = windowUsed(key, sumKey, ms)
    if used + cost > limit then
      local wait = -2
      if cost <= limit then
        local entries = redis.call('ZRANGE', key, 0, -1, 'WITHSCORES')
        local freed = 0
        for j = 1, #entries, 2 do
          freed = freed + costOf(entries[j])
          if used - freed + cost <= limit then
            wait = tonumber(entries[j + 1]) + ms - now
            break
          end
        end
      end
      table.insert(refused, i)
      table.insert(refused, wait)
      table.insert(refused, used)
    end
  else
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
    local held = redis.call('ZCARD', key)
    if held + 1 > limit then
      table.insert(refused, i)
      table.insert(refused, limit < 1 and -2 or -1)
      table.insert(refused, held)
    end
  end
end
if #refused > 1 then return refused end

for i = 1, n do
  local base = 1 + (i - 1) * 4
  local kind, ms, cost = ARGV[base + 1], tonumber(ARGV[base + 3]), ARGV[base + 4]
  local key, sumKey = KEYS[2 * i - 1], KEYS[2 * i]
  if kind == 'window' then
    redis.call('ZADD', key, now, id .. '|' .. cost)
    redis.call('INCRBY', sumKey, cost)
    -- The newest entry leaves the window after ms: then the whole counter is obsolete.
    redis.call('PEXPIRE', key, ms)
    redis.call('PEXPIRE', sumKey, ms)
  else
    redis.call('ZADD', key, now + ms, id)
    if redis.call('PTTL', key) < ms then redis.call('PEXPIRE', key, ms) end
  end
end
return {1}
`;

/**
 * KEYS[1]: a window's sorted set, KEYS[2]: its total. ARGV: id, recorded cost, corrected cost.
 * Keeps the entry's time (the correction does not move it in the window). Returns 0 when the entry
 * already left the window (nothing left to correct), else 1.
 */
export const ADJUST_SCRIPT = `
local old = ARGV[1] .. '|' .. ARGV[2]
local score = redis.call('ZSCORE', KEYS[1], old)
if not score then return 0 end
-- Add before removing: emptying the set would delete the key and drop its expiry.
redis.call('ZADD', KEYS[1], score, ARGV[1] .. '|' .. ARGV[3])
redis.call('ZREM', KEYS[1], old)
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('INCRBY', KEYS[2], tonumber(ARGV[3]) - tonumber(ARGV[2])) end
return 1
`;

/**
 * KEYS: lease sets. ARGV: id, lease ms. Extends this holder's unexpired leases; an expired one is
 * not revived (its slot may already be someone else's). Returns how many were extended.
 */
export const RENEW_SCRIPT = `${PRELUDE}
local held = 0
local ms = tonumber(ARGV[2])
for _, key in ipairs(KEYS) do
  local score = redis.call('ZSCORE', key, ARGV[1])
  if score and tonumber(score) > now then
    redis.call('ZADD', key, 'XX', now + ms, ARGV[1])
    if redis.call('PTTL', key) < ms then redis.call('PEXPIRE', key, ms) end
    held = held + 1
  end
end
return held
`;
