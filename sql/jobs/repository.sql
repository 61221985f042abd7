-- The named statements src/jobs/repository.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- JOB_LAG: jobs_lag
select name, coalesce(extract(epoch from now() - min(next_run_at) filter (where next_run_at <= now() and locked_at is null)), 0)::float8 as lag
           from agenda_jobs where not coalesce(disabled, false) group by name;

-- JOB_NOTIFY: jobs_notify
select pg_notify('agenda_jobs', $1);
