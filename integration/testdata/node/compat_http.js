// One webhook app, on either official SDK's WebhookResponse (SDK=sdk: @jambonz/sdk
// 0.10, else @jambonz/node-client), whose paths each exercise a jambonz behaviour the
// compatibility table lists (docs/compatibility.md).
'use strict';

const {createServer} = require('http');
const {log, listen} = require('./lib');

const {WebhookResponse} = require(process.env.SDK === 'sdk' ? '@jambonz/sdk' : '@jambonz/node-client');

const app = (list) => {
  const r = new WebhookResponse();
  if (typeof r.addVerbs === 'function') r.addVerbs(list);
  else for (const {verb, ...rest} of list) r.addVerb ? r.addVerb(verb, rest) : r[verb.replace(':', '_')](rest);
  return r;
};

const routes = {
  // No verbs: jambonz rejects an inbound call (480, invalid-app-payload).
  '/none': () => 204,
  '/empty': () => app([]),
  // jambonz's own /hello-world reads the application's speech settings.
  '/hello-world': (p) => {
    const {synthesizer} = p.defaults;
    log('hello-world', {vendor: synthesizer.vendor, voice: synthesizer.voice});
    return app([{verb: 'say', text: 'hello world', synthesizer: {vendor: synthesizer.vendor, voice: synthesizer.voice}}, {verb: 'hangup'}]);
  },
  // An action hook answering a web page: jambonz keeps the verbs it had.
  '/page': () => app([{verb: 'gather', input: ['digits'], numDigits: 1, actionHook: '/html', timeout: 2}, {verb: 'say', text: 'still here'}, {verb: 'hangup'}]),
  '/html': () => 'html',
  // Early media: played without answering; the call then ends declined (603).
  '/early': () => app([{verb: 'say', text: 'we are closed', earlyMedia: true}]),
  // gather's rules over HTTP: maxDigits, verb_id.
  '/gather': () => app([{verb: 'gather', id: 'pin', input: ['digits'], maxDigits: 4, actionHook: '/pin', timeout: 10}]),
  '/pin': (p) => {
    log('pin', {digits: p.digits, reason: p.reason, verb_id: p.verb_id});
    return app([{verb: 'hangup'}]);
  },
  '/status': (p) => {
    log('status', {call_status: p.call_status, sip_status: p.sip_status});
    return 204;
  },
};

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const path = req.url.split('?')[0];
    const route = routes[path];
    if (!route) {
      res.writeHead(404);
      res.end();
      return;
    }
    let payload = {};
    try {
      payload = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    } catch (err) {
      res.writeHead(400);
      res.end();
      return;
    }
    let out;
    try {
      out = route(payload);
    } catch (err) {
      // As an express app would: a handler that throws answers 500.
      log('threw', {path, error: err.message});
      res.writeHead(500);
      res.end();
      return;
    }
    if (out === 204) {
      res.writeHead(204);
      res.end();
    } else if (out === 'html') {
      res.writeHead(200, {'Content-Type': 'text/html'});
      res.end('<html><body>ok</body></html>');
    } else {
      res.writeHead(200, {'Content-Type': 'application/json'});
      res.end(JSON.stringify(out));
    }
  });
});

listen(server);
