-- The named statements src/db/health.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- PING: health_ping
select 1 as ok;
