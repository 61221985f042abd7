-- The named statements src/db/rate-limits.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- ADD_POINTS: rate_limit_add_points
insert into rate_limit (key, points, expire)
           select u.k, u.p, $3::bigint + u.d from unnest($1::text[], $2::int[], $4::bigint[]) as u (k, p, d)
         on conflict (key) do update set
           points = case when rate_limit.expire is null or rate_limit.expire <= $3 then excluded.points else rate_limit.points + excluded.points end,
           expire = case when rate_limit.expire is null or rate_limit.expire <= $3 then excluded.expire else rate_limit.expire end
         returning key, points, expire;

-- FULL_BUCKETS: rate_limit_full_buckets
select r.key, r.points, r.expire, b.prefix from rate_limit r
           join unnest($1::text[], $2::int[]) as b (prefix, points) on starts_with(r.key, b.prefix || ':') and r.points >= b.points
         where r.expire > $3;

-- PURGE_ENDED: rate_limit_purge_ended
delete from rate_limit where expire < $1;
