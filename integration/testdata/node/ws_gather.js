// WebSocket app: on session:new say a greeting and gather one digit; when the gather's
// actionHook arrives, reply (ack) with a say and a hangup.
'use strict';

const {createServer} = require('http');
const {createEndpoint} = require('@jambonz/node-client-ws');
const {log, listen, quiet} = require('./lib');

const server = createServer();
const makeService = createEndpoint({server, logger: quiet});
const svc = makeService({path: '/app'});

svc.on('session:new', (session) => {
  log('session:new', {call_sid: session.call_sid, from: session.from, to: session.to, direction: session.direction});
  session
    .on('/menu', (evt) => {
      log('hook', {hook: '/menu', call_sid: session.call_sid, reason: evt.reason, digits: evt.digits});
      session
        .say({text: `You pressed ${evt.digits}. Goodbye.`})
        .hangup()
        .reply();
    })
    .on('call:status', (evt) => log('call:status', {call_status: evt.call_status}))
    .on('jambonz:error', (evt) => log('jambonz:error', {data: evt}))
    .on('close', (code) => log('close', {code}));

  session
    .say({text: 'Welcome to the switchboard test.'})
    .gather({
      input: ['digits'],
      actionHook: '/menu',
      numDigits: 1,
      timeout: 5,
      say: {text: 'Press a key.'},
    })
    .send();
});

listen(server);
