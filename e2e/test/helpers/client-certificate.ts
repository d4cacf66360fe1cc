import { spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A client certificate of `subject` (`/O=group/CN=user`, UTF-8), valid a day, signed with openssl by the CA
 * in `pki` (`ca.crt`, `ca.key`): who a caller is to an apiserver, or to the router, that trusts that CA.
 */
export function clientCertificate(pki: string, subject: string): { cert: Buffer; key: string } {
  const dir = mkdtempSync(join(tmpdir(), 'cellfed-client-cert-'));
  const key = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
    .privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    })
    .toString();
  writeFileSync(join(dir, 'client.key'), key, { mode: 0o600 });
  const result = spawnSync(
    'openssl',
    [
      ...['req', '-x509', '-new', '-key', join(dir, 'client.key'), '-sha256', '-days', '1'],
      ...['-CA', join(pki, 'ca.crt'), '-CAkey', join(pki, 'ca.key'), '-subj', subject, '-utf8'],
      ...['-addext', 'extendedKeyUsage=clientAuth', '-out', join(dir, 'client.crt')],
    ],
    { encoding: 'utf8' },
  );
  if (result.status !== 0) throw new Error(`openssl: ${result.stderr}`);
  return { cert: readFileSync(join(dir, 'client.crt')), key };
}
