/**
 * Who may talk to the dashboard: a request must name a host the dashboard listens as (a page
 * reached through a rebound DNS name says another host, and is refused), come from no other
 * origin, and carry the token in its path (`/<token>/…`), compared in constant time. The token is
 * 192 random bits, made once per dashboard.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';

export type Verdict = { ok: true; path: string } | { ok: false; status: 401 | 403; reason: string };

export function newToken(): string {
  return randomBytes(24).toString('base64url');
}

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

function isUnspecified(host: string): boolean {
  return host === '0.0.0.0' || host === '::';
}

export class Guard {
  /** `Host` values accepted (none until the port is known); undefined: any (every interface: the token alone guards). */
  private hosts: Set<string> | undefined = new Set();
  private readonly token: Buffer;

  constructor(
    token: string,
    private readonly host: string,
  ) {
    this.token = Buffer.from(token);
  }

  /** The port is known: the names the dashboard answers to. */
  listening(port: number): void {
    const host = this.host;
    if (isUnspecified(host)) this.hosts = undefined;
    else {
      const named = isIP(host) === 6 ? `[${host}]` : host;
      const names = isLoopback(host) ? [...LOOPBACK_NAMES, named] : [named];
      this.hosts = new Set(names.map((name) => `${name}:${port}`.toLowerCase()));
    }
  }

  /** The verdict on a request: its path past the token when it may go on. */
  check(url: string | undefined, headers: { host?: string | undefined; origin?: string | undefined }): Verdict {
    const host = headers.host?.toLowerCase();
    if (this.hosts && (!host || !this.hosts.has(host)))
      return { ok: false, status: 403, reason: 'unexpected Host header' };
    const origin = headers.origin;
    if (origin !== undefined && origin !== 'null' && !this.allowsOrigin(origin))
      return { ok: false, status: 403, reason: 'cross-origin request' };
    if (origin === 'null') return { ok: false, status: 403, reason: 'cross-origin request' };
    const path = (url ?? '/').split('?')[0]!;
    const slash = path.indexOf('/', 1);
    const given = Buffer.from(slash === -1 ? path.slice(1) : path.slice(1, slash));
    if (given.length !== this.token.length || !timingSafeEqual(given, this.token))
      return { ok: false, status: 401, reason: 'the dashboard URL carries a token: open the URL it printed' };
    return { ok: true, path: slash === -1 ? '' : path.slice(slash) };
  }

  private allowsOrigin(origin: string): boolean {
    let parsed: URL;
    try {
      parsed = new URL(origin);
    } catch {
      return false;
    }
    if (parsed.protocol !== 'http:') return false;
    return this.hosts ? this.hosts.has(parsed.host.toLowerCase()) : true;
  }
}
