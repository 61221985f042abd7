#!/bin/sh
# Entry point of ops/ha/Dockerfile's image (docs/operations.md "Failover"): fills the template of
# the program named by the first argument from the environment (envsubst) and runs it in the
# foreground as PID 1's child-less exec, so that `docker stop` reaches it.
#   etcd     one etcd member (ETCD_* variables, read by etcd itself)
#   patroni  one Patroni node, as the user postgres (PostgreSQL refuses to run as root)
#   haproxy  HAProxy routing to the Patroni leader
set -eu
case "${1:-}" in
  etcd)
    exec etcd
    ;;
  patroni)
    envsubst < /etc/ha/patroni.yml.template > /var/lib/patroni/patroni.yml
    chown postgres:postgres /var/lib/patroni/patroni.yml
    chmod 0600 /var/lib/patroni/patroni.yml
    exec runuser -u postgres -- patroni /var/lib/patroni/patroni.yml
    ;;
  haproxy)
    envsubst < /etc/ha/haproxy.cfg.template > /tmp/haproxy.cfg
    exec haproxy -f /tmp/haproxy.cfg -db
    ;;
  *)
    echo "usage: ha-entrypoint.sh etcd|patroni|haproxy" >&2
    exit 64
    ;;
esac
