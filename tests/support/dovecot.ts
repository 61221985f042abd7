/**
 * A real IMAP server for the email poller tests: Debian's Dovecot (`dovecot-imapd`, installed by
 * `.ci/run`), started on a free loopback port with its own configuration, passwd-file and maildirs
 * under a temporary directory, plain-text login without TLS (loopback only), no login penalty,
 * and stopped afterwards. Messages are put into a mailbox with IMAP APPEND, as a mail server would
 * deliver them.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ImapFlow } from "imapflow";
import { freePort } from "../../src/db/embedded.js";

const DOVECOT = "/usr/sbin/dovecot";

/** A running Dovecot. */
export interface Dovecot {
  host: string;
  port: number;
  /** Adds (or replaces) a mailbox login. */
  addUser(user: string, password: string): void;
  /** Appends an RFC 822 message to `user`'s INBOX, unseen. @returns its UID. */
  deliver(user: string, password: string, message: { from?: string; subject: string; text: string }): Promise<number>;
  /** The flags of every message of `user`'s INBOX, by UID. */
  flags(user: string, password: string): Promise<Map<number, string[]>>;
  stop(): Promise<void>;
}

const readLog = (dir: string): string => {
  try {
    return readFileSync(join(dir, "dovecot.log"), "utf8").slice(-2000);
  } catch {
    return "(no log)";
  }
};

async function client(port: number, user: string, pass: string): Promise<ImapFlow> {
  const c = new ImapFlow({ host: "127.0.0.1", port, secure: false, doSTARTTLS: false, auth: { user, pass }, logger: false });
  await c.connect();
  return c;
}

/** Starts Dovecot as its Debian users (`dovecot`, `dovenull`): its login processes refuse to run as root. */
export async function startDovecot(): Promise<Dovecot> {
  const dir = mkdtempSync(join(tmpdir(), "dovecot-"));
  chmodSync(dir, 0o755);
  for (const sub of ["run", "state", "mail"]) mkdirSync(join(dir, sub));
  execFileSync("chown", ["dovecot:dovecot", join(dir, "mail")]);
  // One passwd-file per login: Dovecot caches a passwd-file until its mtime changes (whole
  // seconds), so users appended to one shared file within a second would not be seen.
  const users = join(dir, "users");
  mkdirSync(users);
  const port = await freePort();
  const config = join(dir, "dovecot.conf");
  writeFileSync(
    config,
    `protocols = imap
listen = 127.0.0.1
base_dir = ${dir}/run
state_dir = ${dir}/state
log_path = ${dir}/dovecot.log
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
auth_failure_delay = 0
mail_location = maildir:${dir}/mail/%u
default_internal_user = dovecot
default_internal_group = dovecot
default_login_user = dovenull
mail_uid = dovecot
mail_gid = dovecot
first_valid_uid = 1
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${users}/%u
}
userdb {
  driver = static
  args = uid=dovecot gid=dovecot home=${dir}/mail/%u
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
}
service anvil {
  unix_listener anvil-auth-penalty {
    mode = 0
  }
}
`,
  );
  // Dovecot daemonizes: its output goes to the log file, and no pipe of ours may stay open in it.
  const started = spawnSync(DOVECOT, ["-c", config], { stdio: "ignore" });
  if (started.status !== 0) throw new Error(`dovecot did not start (exit ${started.status}): ${readLog(dir)}`);
  // Wait for the listener.
  const deadline = Date.now() + 10_000;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once("error", () => resolve(true));
      s.listen(port, "127.0.0.1", () => s.close(() => resolve(false)));
    });
    if (open) break;
    if (Date.now() > deadline) throw new Error(`dovecot does not listen on ${port}: ${readLog(dir)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    host: "127.0.0.1",
    port,
    addUser(user, password) {
      const file = join(users, user);
      writeFileSync(file, `${user}:{PLAIN}${password}\n`);
      chmodSync(file, 0o644);
    },
    async deliver(user, password, message) {
      const c = await client(port, user, password);
      try {
        const raw = [
          `From: ${message.from ?? "PIN Service <pins@provider.example>"}`,
          `To: ${user}`,
          `Subject: ${message.subject}`,
          `Date: ${new Date().toUTCString()}`,
          `Message-ID: <${Date.now()}.${Math.random().toString(36).slice(2)}@provider.example>`,
          "Content-Type: text/plain; charset=utf-8",
          "",
          message.text,
          "",
        ].join("\r\n");
        const result = await c.append("INBOX", raw).catch((e: { responseText?: string; message: string }) => { throw new Error(`APPEND failed: ${e.responseText ?? e.message}`); });
        return result ? Number(result.uid) : 0;
      } finally {
        await c.logout().catch(() => c.close());
      }
    },
    async flags(user, password) {
      const c = await client(port, user, password);
      const found = new Map<number, string[]>();
      try {
        const lock = await c.getMailboxLock("INBOX");
        try {
          if ((c.mailbox && c.mailbox.exists) || 0) for await (const m of c.fetch("1:*", { uid: true, flags: true })) found.set(m.uid, [...(m.flags ?? [])]);
        } finally {
          lock.release();
        }
      } finally {
        await c.logout().catch(() => c.close());
      }
      return found;
    },
    async stop() {
      try {
        const pid = Number(readFileSync(join(dir, "run", "master.pid"), "utf8").trim());
        process.kill(pid, "SIGTERM");
        const until = Date.now() + 5_000;
        while (Date.now() < until) {
          try {
            process.kill(pid, 0);
          } catch {
            break;
          }
          await new Promise((r) => setTimeout(r, 50));
        }
      } catch {
        // already gone
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
