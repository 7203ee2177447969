// HTTP webhook app built with @jambonz/node-client's WebhookResponse: the call hook
// answers say + gather, the gather's action hook answers hangup. Every request must
// carry a valid Jambonz-Signature, checked with the SDK's verifyJambonzSignature
// middleware; an unsigned or wrongly signed request gets 403.
'use strict';

const {createServer} = require('http');
const {WebhookResponse} = require('@jambonz/node-client');
const {log, listen} = require('./lib');

const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  process.stderr.write('WEBHOOK_SECRET must be set\n');
  process.exit(2);
}
const verify = WebhookResponse.verifyJambonzSignature(secret);
// VERIFY=parsed hands the middleware the parsed body, as the SDK's documented use
// behind express.json() does: it then checks JSON.stringify(req.body), the body
// re-serialised, not the bytes received.
const parsed = process.env.VERIFY === 'parsed';

// checkSignature runs the SDK middleware (written for Express) on a plain Node request:
// it needs req.get() and the body, the raw string (signed as received) or parsed.
const checkSignature = (req, body) => {
  const shim = {url: req.url, body: parsed ? JSON.parse(body) : body, get: (name) => req.headers[name.toLowerCase()]};
  let ok = false;
  verify(shim, null, () => { ok = true; });
  return ok;
};

const routes = {
  '/call': (payload) => {
    log('call-hook', {
      call_sid: payload.call_sid, from: payload.from, to: payload.to,
      direction: payload.direction, call_status: payload.call_status,
    });
    const app = new WebhookResponse();
    app
      .say({text: 'Welcome to the HTTP test app.'})
      .gather({input: ['digits'], actionHook: '/action', numDigits: 1, timeout: 5, say: {text: 'Press a key.'}});
    return app;
  },
  // A speech gather: what the caller says comes back in the action hook's speech.
  '/speech': () => {
    const app = new WebhookResponse();
    app.gather({input: ['speech'], actionHook: '/action', timeout: 5, say: {text: 'Say something.'}});
    return app;
  },
  '/action': (payload) => {
    log('action-hook', {call_sid: payload.call_sid, reason: payload.reason, digits: payload.digits,
      transcript: payload.speech?.alternatives?.[0]?.transcript});
    const app = new WebhookResponse();
    app.say({text: `You pressed ${payload.digits}.`}).hangup();
    return app;
  },
  '/status': (payload) => {
    log('status-hook', {call_sid: payload.call_sid, call_status: payload.call_status});
    return null;
  },
};

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const path = req.url.split('?')[0];
    try {
      if (!checkSignature(req, body)) throw new Error('signature check did not pass');
    } catch (err) {
      log('signature-rejected', {path, error: err.message});
      res.writeHead(403, {'Content-Type': 'text/plain'});
      res.end('forbidden');
      return;
    }
    if (path === '/html') {
      // A 200 that is no application: a web page where the call hook should be.
      log('html-served', {path});
      res.writeHead(200, {'Content-Type': 'text/html; charset=utf-8'});
      res.end('<!DOCTYPE html><html><body><h1>It works!</h1></body></html>');
      return;
    }
    const route = routes[path];
    if (req.method !== 'POST' || !route) {
      log('not-found', {method: req.method, path});
      res.writeHead(404);
      res.end();
      return;
    }
    let payload;
    try {
      payload = JSON.parse(body);
    } catch (err) {
      log('bad-body', {path, error: err.message});
      res.writeHead(400);
      res.end();
      return;
    }
    const app = route(payload);
    if (!app) {
      res.writeHead(204);
      res.end();
      return;
    }
    res.writeHead(200, {'Content-Type': 'application/json'});
    res.end(JSON.stringify(app));
  });
});

listen(server);
