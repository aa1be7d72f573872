/**
 * A TCP proxy in front of the test PostgreSQL server, private to one test: the code under test
 * connects through it, and the test makes the store unreachable for that code alone (the server
 * keeps serving everyone else). `down()` drops every open connection and refuses new ones
 * (ECONNREFUSED, as a stopped server); `up()` listens again on the same port; `restart(ms)` is
 * both, as a server restart looks from the client side; `stall()` accepts connections and never
 * answers (a hung server, or a network path that drops packets), `up()` ends it.
 */
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface TcpProxy {
  readonly port: number;
  /** `url` with its host and port replaced by the proxy's. */
  through(url: string): string;
  /** Connections accepted so far. */
  readonly accepted: number;
  down(): Promise<void>;
  stall(): Promise<void>;
  up(): Promise<void>;
  restart(downMs: number): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  let server: net.Server | undefined;
  let port = 0;
  let stalled = false;

  const listen = async (): Promise<void> => {
    const s = net.createServer((client) => {
      accepted++;
      if (stalled) {
        sockets.add(client);
        client.on('error', () => client.destroy());
        return;
      }
      const upstream = net.connect(target.port, target.host);
      sockets.add(client);
      sockets.add(upstream);
      const end = (): void => {
        client.destroy();
        upstream.destroy();
        sockets.delete(client);
        sockets.delete(upstream);
      };
      for (const sock of [client, upstream]) {
        sock.on('error', end);
        sock.on('close', end);
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => resolve());
    });
    port = (s.address() as net.AddressInfo).port;
    server = s;
  };

  const down = async (): Promise<void> => {
    const s = server;
    server = undefined;
    for (const sock of sockets) sock.destroy();
    sockets.clear();
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  };

  await listen();
  return {
    get port() {
      return port;
    },
    get accepted() {
      return accepted;
    },
    through(url) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    down,
    async stall() {
      await down();
      stalled = true;
      await listen();
    },
    async up() {
      if (stalled) {
        await down();
        stalled = false;
      }
      if (!server) await listen();
    },
    async restart(downMs) {
      await down();
      await sleep(downMs);
      await listen();
    },
    close: down,
  };
}
