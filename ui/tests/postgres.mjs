// Test support: a private PostgreSQL server from Debian's `postgresql` binaries, on a temp
// folder and 127.0.0.1 (the browser tests of distributed runs need a Postgres store). As root, the
// server runs as `nobody` (PostgreSQL refuses to run as root). Stopped by `stop()`, and with the
// test process in any case (SIGTERM on exit).

import { spawn, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

const NOBODY = 65534;

/** The newest installed server's bin folder, or null. */
function binDir() {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return null;
  const dirs = readdirSync(root)
    .map((v) => path.join(root, v, "bin"))
    .filter((d) => existsSync(path.join(d, "initdb")))
    .sort();
  return dirs.pop() ?? null;
}

/** Why no server can be started here, or null. */
export function postgresMissing() {
  return binDir() ? null : "no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)";
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** `cmd args` as the server's user: `nobody` under root, else the caller. */
function asServerUser(cmd, args) {
  return process.getuid?.() === 0 ? ["setpriv", ["--reuid", String(NOBODY), "--regid", String(NOBODY), "--clear-groups", cmd, ...args]] : [cmd, args];
}

/** Start a server; resolves with `{ url, stop() }` once it answers queries. */
export async function startPostgres() {
  const bin = binDir();
  if (!bin) throw new Error(postgresMissing());
  const base = mkdtempSync(path.join(tmpdir(), "harness-s-pg-"));
  const data = path.join(base, "data");
  const sock = path.join(base, "sock");
  mkdirSync(data);
  mkdirSync(sock);
  if (process.getuid?.() === 0) for (const p of [base, data, sock]) chownSync(p, NOBODY, NOBODY);
  const [icmd, iargs] = asServerUser(path.join(bin, "initdb"), ["-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale", "C", "-D", data]);
  const init = spawnSync(icmd, iargs, { encoding: "utf8" });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.error}`);
  const port = await freePort();
  const settings = ["listen_addresses=127.0.0.1", "fsync=off", "synchronous_commit=off", "full_page_writes=off", "max_connections=100"].flatMap((c) => ["-c", c]);
  const [pcmd, pargs] = asServerUser(path.join(bin, "postgres"), ["-D", data, "-p", String(port), "-k", sock, ...settings]);
  const server = spawn(pcmd, pargs, { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  server.stderr.on("data", (b) => (log += b.toString()));
  const kill = () => server.exitCode === null && server.kill("SIGTERM");
  process.once("exit", kill);
  const t0 = Date.now();
  for (;;) {
    const ok = spawnSync(path.join(bin, "psql"), ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-d", "postgres", "-c", "select 1"], { stdio: "ignore" }).status === 0;
    if (ok) break;
    if (server.exitCode !== null || Date.now() - t0 > 30_000) {
      kill();
      throw new Error(`the test PostgreSQL server did not come up:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      if (server.exitCode === null) {
        server.kill("SIGTERM");
        await new Promise((r) => {
          const t = setTimeout(() => {
            server.kill("SIGKILL");
            r();
          }, 10_000);
          server.once("exit", () => {
            clearTimeout(t);
            r();
          });
        });
      }
      rmSync(base, { recursive: true, force: true });
    },
  };
}
