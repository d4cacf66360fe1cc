import { createHash } from 'node:crypto';

import { CREDENTIAL_ID_EXTRA, userOfCertificate } from './authenticator.ts';

describe('userOfCertificate', () => {
  const raw = Buffer.from('the DER bytes of a certificate');

  it('reads CN as the user, each O as a group, and the certificate digest as the credential id', () => {
    const user = userOfCertificate({ subject: { CN: 'jane', O: ['dev', 'ops'] } as never, raw });
    expect(user).toEqual({
      username: 'jane',
      groups: ['dev', 'ops', 'system:authenticated'],
      extra: { [CREDENTIAL_ID_EXTRA]: [`X509SHA256=${createHash('sha256').update(raw).digest('hex')}`] },
    });
  });

  it('takes a single O as one group, and refuses a certificate without a CN', () => {
    expect(userOfCertificate({ subject: { CN: 'jane', O: 'dev' } as never, raw })?.groups).toEqual([
      'dev',
      'system:authenticated',
    ]);
    expect(userOfCertificate({ subject: { O: 'dev' } as never, raw })).toBeNull();
  });
});
