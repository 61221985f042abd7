-- The named statements src/modules/users/repository.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- DEACTIVATE_USER: users_deactivate
update app_user set status = $3, is_active = $4, verification_status = $5, tokens_revoked_at = now(),
                token_version = token_version + 1, updated_at = now()
          where user_id = $1::uuid and customer_id = $2 and deleted_at is null;
