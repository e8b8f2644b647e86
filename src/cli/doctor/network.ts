/** `doctor`'s network steps for a URL server: DNS, TCP, TLS. Each says what to do when it fails. */
import { lookup } from 'node:dns/promises';
import { isIP, connect as tcpConnect } from 'node:net';
import { checkServerIdentity, connect as tlsConnect, type PeerCertificate } from 'node:tls';
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

/** The names a certificate is for: its subjectAltName entries, else its CN. */
function namesOf(certificate: PeerCertificate): string {
  const alt = certificate.subjectaltname;
  if (alt) return alt.replace(/(?:DNS|IP Address):/g, '');
  return [certificate.subject?.CN ?? '?'].flat().join(', ');
}

const UNTRUSTED = /SELF_SIGNED|UNABLE_TO_GET_ISSUER|UNABLE_TO_VERIFY|CERT_UNTRUSTED|CERT_SIGNATURE_FAILURE/;

/** A certificate refused by the checks: what was wrong, and what to do about it. */
function refusedCertificate(refused: Error | string, name: string, certificate: PeerCertificate): Step {
  // The handshake's verdict is a code (`CERT_HAS_EXPIRED`); the host name check's an Error.
  const code = typeof refused === 'string' ? refused : (codeOf(refused) ?? refused.message);
  const names = namesOf(certificate);
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return fail(
      'TLS',
      `the certificate is for ${names}, not ${name}`,
      `use a URL with a name the certificate is for, or ask the server's operator for a certificate that names ${name}`,
    );
  if (code === 'CERT_HAS_EXPIRED')
    return fail(
      'TLS',
      `the certificate for ${names} expired on ${certificate.valid_to}`,
      "the server's operator must renew it (nothing to change here)",
    );
  if (code === 'CERT_NOT_YET_VALID')
    return fail(
      'TLS',
      `the certificate for ${names} is valid only from ${certificate.valid_from}`,
      "check this machine's clock (and the server's)",
    );
  if (UNTRUSTED.test(code))
    return fail(
      'TLS',
      `${/SELF_SIGNED/.test(code) ? 'a self-signed certificate' : 'a certificate from a CA'} not trusted here (${code}): for ${names}, issued by ${[certificate.issuer?.CN ?? '?'].flat().join(', ')}`,
      'the certificate is not trusted here: add the CA that issued it (for a self-signed certificate, the certificate) with NODE_EXTRA_CA_CERTS=/path/to/ca.pem, or give the server a certificate from a public CA',
    );
  return fail(
    'TLS',
    `${typeof refused === 'string' ? refused : describe(refused)} (certificate for ${names})`,
    "check the server's certificate with its operator",
  );
}

/** A handshake that failed before any certificate was seen. */
function failedHandshake(error: Error): Step {
  const code = codeOf(error) ?? '';
  const plain =
    /WRONG_VERSION|PACKET_LENGTH|EPROTO/.test(code) || /wrong version number|packet length/i.test(error.message);
  // OpenSSL's message is a trace (`…:SSL routines:ssl3_get_record:wrong version number:file:line:`): its reason alone.
  const reason = /SSL routines:[^:]*:([^:]+):/.exec(error.message)?.[1];
  return fail(
    'TLS',
    reason ? `${code || 'TLS'}: ${reason}` : describe(error).trim(),
    plain
      ? 'the port does not speak TLS: try http:// instead of https://'
      : 'check the TLS setup of the server (certificate, protocols)',
  );
}

export function checkTls(url: URL, timeoutMs: number): Promise<Step> {
  if (url.protocol !== 'https:') return Promise.resolve(skip('TLS', 'not used (http://)'));
  const start = performance.now();
  const name = host(url);
  return new Promise((resolve) => {
    // The certificate is checked after the handshake rather than by it, so a refused one can be described.
    const socket = tlsConnect({
      host: name,
      port: port(url),
      servername: isIP(name) ? undefined : name,
      timeout: timeoutMs,
      rejectUnauthorized: false,
    });
    const done = (step: Step) => {
      socket.destroy();
      resolve(step);
    };
    socket.once('secureConnect', () => {
      const certificate = socket.getPeerCertificate();
      const refused = (socket.authorizationError as Error | string | null) || checkServerIdentity(name, certificate);
      if (refused) return done(refusedCertificate(refused, name, certificate));
      const days = daysLeft(certificate);
      const detail = `${socket.getProtocol() ?? 'TLS'}, certificate for ${namesOf(certificate)} valid ${days} more days (${since(start)})`;
      done(
        days < 14
          ? warn('TLS', detail, "the certificate expires soon: tell the server's operator to renew it")
          : ok('TLS', detail),
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
    socket.once('error', (error: Error) => done(failedHandshake(error)));
  });
}
