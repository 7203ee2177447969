// Verifies one webhook delivery with the official verifiers: the Standard Webhooks
// reference library (standardwebhooks) and Svix's (svix), each with every secret
// given, as a receiver during a secret rotation would. Reads one JSON object on stdin:
//   {"secrets": ["whsec_..."], "headers": {"webhook-id": ..., ...}, "body": "..."}
// and prints one JSON line per secret and library:
//   {"library": "standardwebhooks", "secret": 0, "valid": true, "error": ""}
//
// Neither library verifies v1a (ed25519) signatures (standardwebhooks 1.3.0 and svix
// 2.5.0 check v1 only): for a whpk_ public key it checks the v1a signatures as the
// Standard Webhooks specification defines them, with Node's own ed25519
// (crypto.verify), printing {"library": "node:crypto", ...}.
'use strict';
const crypto = require('crypto');
const { Webhook: StandardWebhook } = require('standardwebhooks');
const { Webhook: SvixWebhook } = require('svix');

// verifyV1a checks the v1a entries of webhook-signature against the whpk_ key.
function verifyV1a(publicKey, headers, body) {
  const raw = Buffer.from(publicKey.slice('whpk_'.length), 'base64');
  const key = crypto.createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
  const signed = Buffer.from(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`);
  const age = Math.abs(Date.now() / 1000 - Number(headers['webhook-timestamp']));
  if (!(age < 300)) throw new Error('timestamp out of tolerance');
  for (const entry of headers['webhook-signature'].split(' ')) {
    const [version, sig] = entry.split(',');
    if (version === 'v1a' && crypto.verify(null, signed, key, Buffer.from(sig, 'base64'))) return true;
  }
  throw new Error('no v1a signature matches');
}

let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => { input += chunk; });
process.stdin.on('end', () => {
  const { secrets, headers, body } = JSON.parse(input);
  secrets.forEach((secret, i) => {
    const verifiers = secret.startsWith('whpk_')
      ? [['node:crypto', () => verifyV1a(secret, headers, body)]]
      : [StandardWebhook, SvixWebhook].map((Webhook, k) => [
          k === 0 ? 'standardwebhooks' : 'svix', () => new Webhook(secret).verify(body, headers) !== undefined]);
    for (const [library, verify] of verifiers) {
      let valid = false;
      let error = '';
      try {
        valid = verify();
      } catch (e) {
        error = String(e && e.message ? e.message : e);
      }
      process.stdout.write(JSON.stringify({ library, secret: i, valid, error }) + '\n');
    }
  });
});
