// Verifies one webhook delivery with the official verifiers: the Standard Webhooks
// reference library (standardwebhooks) and Svix's (svix), each with every secret
// given, as a receiver during a secret rotation would. Reads one JSON object on stdin:
//   {"secrets": ["whsec_..."], "headers": {"webhook-id": ..., ...}, "body": "..."}
// and prints one JSON line per secret and library:
//   {"library": "standardwebhooks", "secret": 0, "valid": true, "error": ""}
'use strict';
const { Webhook: StandardWebhook } = require('standardwebhooks');
const { Webhook: SvixWebhook } = require('svix');

let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => { input += chunk; });
process.stdin.on('end', () => {
  const { secrets, headers, body } = JSON.parse(input);
  secrets.forEach((secret, i) => {
    for (const [library, Webhook] of [['standardwebhooks', StandardWebhook], ['svix', SvixWebhook]]) {
      let valid = false;
      let error = '';
      try {
        const payload = new Webhook(secret).verify(body, headers);
        valid = payload !== undefined;
      } catch (e) {
        error = String(e && e.message ? e.message : e);
      }
      process.stdout.write(JSON.stringify({ library, secret: i, valid, error }) + '\n');
    }
  });
});
