/** `doctor`'s network steps for a URL server: DNS, TCP, TLS. Each says what to do when it fails. */
import { lookup } from 'node:dns/promises';
import { isIP, connect as tcpConnect } from 'node:net';
import { connect as tlsConnect, type PeerCertificate } from 'node:tls';
import { codeOf, describe, fail, ok, since, skip, warn, type Step } from './step.js';

function port(url: URL): number {
  return Number(url.port || (url.protocol === 'https:' ? 443 : 80));
}

/** The URL's host name as a socket wants it (`[::1]` → `::1`). */
function host(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

export async function checkDns(url: URL): Promise<Step> {
  const name = host(url);
  if (isIP(name)) return ok('DNS', `${name} (an address: nothing to resolve)`);
  const start = performance.now();
  try {
    const addresses = await lookup(name, { all: true });
    return ok('DNS', `${name} → ${addresses.map((a) => a.address).join(', ')} (${since(start)})`);
  } catch (error) {
    return fail(
      'DNS',
      `${name} does not resolve (${codeOf(error) ?? describe(error)})`,
      `check the host name in the URL; on a private network, check the VPN or the DNS server that knows ${name}`,
    );
  }
}

export function checkTcp(url: URL, timeoutMs: number): Promise<Step> {
  const start = performance.now();
  const target = `${host(url)}:${port(url)}`;
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: host(url), port: port(url), timeout: timeoutMs });
    const done = (step: Step) => {
      socket.destroy();
      resolve(step);
    };
    socket.once('connect', () => done(ok('TCP', `connected to ${target} (${since(start)})`)));
    socket.once('timeout', () =>
      done(
        fail(
          'TCP',
          `no answer from ${target} within ${timeoutMs} ms`,
          'a firewall or proxy drops the connection, or the host is down: check that the port is open from this machine',
        ),
      ),
    );
    socket.once('error', (error) => {
      const refused = codeOf(error) === 'ECONNREFUSED';
      done(
        fail(
          'TCP',
          refused ? `${target} refused the connection (nothing listens there)` : describe(error),
          refused
            ? `start the server, or check the port in the URL (the server may listen on another one)`
            : 'check the network path to the host (firewall, proxy, VPN)',
        ),
      );
    });
  });
}

function daysLeft(certificate: PeerCertificate): number {
  return Math.floor((Date.parse(certificate.valid_to) - Date.now()) / 86_400_000);
}

export function checkTls(url: URL, timeoutMs: number): Promise<Step> {
  if (url.protocol !== 'https:') return Promise.resolve(skip('TLS', 'not used (http://)'));
  const start = performance.now();
  return new Promise((resolve) => {
    const socket = tlsConnect({
      host: host(url),
      port: port(url),
      servername: isIP(host(url)) ? undefined : host(url),
      timeout: timeoutMs,
    });
    const done = (step: Step) => {
      socket.destroy();
      resolve(step);
    };
    socket.once('secureConnect', () => {
      const certificate = socket.getPeerCertificate();
      const days = daysLeft(certificate);
      const detail = `${socket.getProtocol() ?? 'TLS'}, certificate for ${[certificate.subject?.CN ?? '?'].flat().join(', ')} valid ${days} more days (${since(start)})`;
      done(
        days < 14 ? warn('TLS', detail, 'the certificate expires soon: tell the server operator') : ok('TLS', detail),
      );
    });
    socket.once('timeout', () =>
      done(
        fail(
          'TLS',
          `no TLS handshake within ${timeoutMs} ms`,
          'the port may not speak TLS: is the URL http:// rather than https://?',
        ),
      ),
    );
    socket.once('error', (error) => {
      const code = codeOf(error) ?? '';
      const untrusted = /CERT|SELF_SIGNED|UNABLE_TO/.test(code);
      done(
        fail(
          'TLS',
          describe(error),
          untrusted
            ? 'the certificate is not trusted here: add its CA with NODE_EXTRA_CA_CERTS=/path/to/ca.pem, or fix the server certificate'
            : /WRONG_VERSION|EPROTO/.test(code)
              ? 'the port does not speak TLS: try http:// instead of https://'
              : 'check the TLS setup of the server (certificate, protocols)',
        ),
      );
    });
  });
}
